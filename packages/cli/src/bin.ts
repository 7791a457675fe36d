#!/usr/bin/env node
// The `vigil` command. Everything it does is in main(); this file only wires the process to it.
import { main } from './main.js';

main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  color: Boolean(process.stdout.isTTY) && !('NO_COLOR' in process.env),
  interactive: Boolean(process.stdout.isTTY),
}).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`vigil: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
