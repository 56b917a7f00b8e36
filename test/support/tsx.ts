// Node flags that run a TypeScript file in a child process through tsx, from any working folder: `--import`
// where Node has it (>= 18.19, 20), else `--loader` (Node 18.17, the oldest `engines` allows; tools/test-node18.sh),
// whose "experimental loader" warning is silenced so stderr stays what the program wrote.
import { pathToFileURL } from 'node:url';

const TSX = pathToFileURL(require.resolve('tsx')).href;

export const TSX_FLAGS: string[] = process.allowedNodeEnvironmentFlags.has('--import')
  ? ['--import', TSX]
  : ['--loader', TSX, '--no-warnings'];
