/**
 * How the operator's process is started in its Deployment (and by the tests and bench that run it on the host).
 *
 * Node runs `run` without V8's optimizing (TurboFan) and baseline (Sparkplug) compilers. An idle operator's code
 * is cold: what the compilers would make is not worth their memory. Most of the work that is hot (hashing,
 * sealing, compressing, the streams' copies) is Node's native code either way; the JavaScript around an S3
 * backup's stream is slower (0.7× `etcdctl`'s speed, 0.99× before, on a noisy day). And with a young
 * generation of at most 3 × 2 MiB: V8 sizes it up to 3 × 16 MiB under a stream's allocation rate, and most of it
 * stays resident.
 * Measured on the lab (docs/decisions.md): idle with one cluster 63 → 55 MiB RSS, with twenty 71 → 59, the same
 * idle CPU; the peak of a 1.2 GB S3 backup 172 → 106–109 MiB (96–106 with 5 MiB parts), its operator CPU 4.7 →
 * 5.2–5.6 s.
 * Only `run` gets these: the pods that stream a snapshot get streamNodeEnv (snapshot-pod.ts) instead. Their
 * 1 MiB did not help `run` (backup bench, 1 run each, 2026-11-29: S3 stream 8.7 s against 8.2 s, peak 100 MiB
 * against 98).
 * `--jitless` would save as much, but it takes WebAssembly away, and with it Node's own fetch.
 */
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--no-opt', '--no-sparkplug', '--max-semi-space-size=2'];

/** Where the image keeps node and the CLI: distroless's layout, which the lab's image copies. */
const IMAGE_NODE = '/nodejs/bin/node';
const IMAGE_CLI = '/app/dist/src/cli/main.js';

/** The Deployment's container command; its args are `run` and the flags. */
export const OPERATOR_COMMAND: readonly string[] = [IMAGE_NODE, ...OPERATOR_NODE_FLAGS, IMAGE_CLI];
