/** Kubernetes quantities ("512Mi", "0.5", "1e3") as numbers, to compare what the API server may write in other forms. */

const SUFFIXES: Record<string, number> = {
  '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A Kubernetes quantity's value ("512Mi", "0.5", "1e3"), or undefined when it is not one. */
export function quantityValue(q: string): number | undefined {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+)|([A-Za-z]*))$/.exec(q);
  if (!m) return undefined;
  if (m[2] !== undefined) return Number(m[1]) * 10 ** Number(m[2]);
  const factor = SUFFIXES[m[3] ?? ''];
  return factor === undefined ? undefined : Number(m[1]) * factor;
}

