#!/usr/bin/env node
// The `vigil` bin: a file that exists before the package is built, so that npm links it when a
// workspace installs before it builds; the command itself is the built dist/bin.mjs.
import '../dist/bin.mjs';
