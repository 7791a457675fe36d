/** @vigil/http-express-adapter: the public HTTP API of Vigil as an Express router. */
export const API_VERSIONS = ['v1', 'v2'] as const;
