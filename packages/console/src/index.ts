/** @vigil/console: the Vigil console, an Express router that serves a web app over a Vigil instance. */
export { vigilConsole, type VigilConsoleOptions } from './console-router.js';
export { type ConsoleAuth } from './session.js';
