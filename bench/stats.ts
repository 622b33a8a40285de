export interface Summary {
  runs: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
}

/** The median of a set of samples, to two decimals (of an even count, the mean of the middle two). */
export function medianOf(samples: number[]): number {
  return Math.round(summarise(samples.map((x) => x * 1000)).medianMs / 10) / 100;
}

/** Median, min and max of a set of durations (the median of an even count is the mean of the middle two). */
export function summarise(samplesMs: number[]): Summary {
  if (samplesMs.length === 0) throw new Error('no samples to summarise');
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  return { runs: sorted.length, medianMs: Math.round(median), minMs: Math.round(sorted[0] ?? 0), maxMs: Math.round(sorted.at(-1) ?? 0) };
}
