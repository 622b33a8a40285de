/** A bad command line: main says it on stderr with the command's usage and exits 2. */
export class UsageError extends Error {}
