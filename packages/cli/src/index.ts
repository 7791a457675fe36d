export {
  CONFIG_FILES,
  ConfigError,
  defineConfig,
  findConfigFile,
  loadConfigFile,
  type CliVigilOptions,
  type VigilCliConfig,
  type VigilCliConfigExport,
} from './config.js';
export { DEFAULT_KEY_NAME } from './extra-commands.js';
export { main, type MainOptions } from './main.js';
