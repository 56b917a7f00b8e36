// Every CLI command, in the order `neardup --help` lists them. Engines add theirs here.
import type { Command } from './common';
import { shinglesCommand } from './commands/shingles';
import { minhashCommand } from './commands/minhash';
import { doubriCommand } from './commands/doubri';
import { dedupCommand } from './commands/dedup';
import { simhashCommand } from './commands/simhash';
import { onionCommand } from './commands/onion';
import { paragraphsCommand } from './commands/paragraphs';
import { dupiCommand } from './commands/dupi';
import { passagesCommand } from './commands/passages';
import { similarCommand } from './commands/similar';
import { dedupStageCommand } from './commands/dedup-stage';
import { workerCommand } from './commands/worker';

export const commands: Command[] = [
  shinglesCommand, minhashCommand, dedupCommand, doubriCommand, simhashCommand, paragraphsCommand, onionCommand,
];
commands.push(dupiCommand, passagesCommand);
commands.push(similarCommand);
commands.push(dedupStageCommand, workerCommand);
