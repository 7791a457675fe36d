/** @vigil/console: the Vigil console, an Express router that serves a web app over a Vigil instance. */
