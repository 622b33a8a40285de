/**
 * Orders names by their UTF-16 code units, as `<` does. Names here (members, claims, nodes, zones) are
 * Kubernetes names and labels, ASCII: this is the order a person reads, the same on every machine whatever its
 * locale (localeCompare's is not), and it keeps ICU's collation data out of the operator's memory (some 3 MiB
 * of RSS).
 */
export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
