// The benchmarks' worker threads: started from a file beside this one, ready once it says so.
import { Worker } from 'node:worker_threads';

/**
 * Starts the worker thread `file` (relative to this folder) with `workerData` and resolves with it
 * once it posts { ready } (and that message). Named after its file, so the benchmarks' thread
 * tables tell one thread from another.
 */
export function startWorker(file, workerData) {
  const worker = new Worker(new URL(file, import.meta.url), { workerData, name: file.replace(/^\.\/|\.mjs$/g, '') });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (message) => (message.ready ? resolve({ worker, ready: message }) : reject(new Error(`${file}: ${JSON.stringify(message)}`))));
  });
}

/** The next message of a worker that satisfies `match`. */
export const nextMessage = (worker, match) =>
  new Promise((resolve, reject) => {
    const onMessage = (message) => {
      if (!match(message)) return;
      worker.off('message', onMessage);
      worker.off('error', reject);
      resolve(message);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
