// Every CLI command, in the order `neardup --help` lists them. Engines add theirs here.
import type { Command } from './common';
import { shinglesCommand } from './commands/shingles';
import { onionCommand } from './commands/onion';
import { paragraphsCommand } from './commands/paragraphs';

export const commands: Command[] = [shinglesCommand, onionCommand, paragraphsCommand];
