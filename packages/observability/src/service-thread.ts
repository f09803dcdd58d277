// A service's background work on an event loop of its own (a worker thread): the requests its API
// serves (large pages, request bodies, signature checks, their garbage collection) cannot delay
// that work, and that work cannot delay the API. The thread has its own V8 heap and its own
// connections; it talks to the main thread by messages only.
import { getPriority, setPriority } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, parentPort } from 'node:worker_threads';
import type { Logger } from './logger';
import { promClient, type Registry } from './metrics';

/** A message between a service and its thread: `kind` says what it is. */
export interface ThreadMessage {
  kind: string;
  [field: string]: unknown;
}

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** Control messages of the channel itself (the service's own kinds must not start with `thread:`). */
const READY = 'thread:ready';
const STOP = 'thread:stop';
const STOPPED = 'thread:stopped';
const METRICS = 'thread:metrics';

/**
 * The main thread's handle on a service thread. `start` resolves once the thread said it is ready
 * (its start-up failing rejects it); a thread that fails later ends the process, as a failed
 * service would, so that it is restarted whole. `stop` asks the thread to finish its work and
 * resolves once it has ended.
 */
export class ServiceThread {
  private worker: Worker | undefined;
  private readonly handlers = new Map<string, (message: ThreadMessage) => void>();
  private readonly replies = new Map<number, (metrics: MetricsJson) => void>();
  private nextRequest = 1;
  private stopping = false;
  private ended: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: {
      /** The thread's compiled entry module. */
      file: string;
      /** Names the thread in logs and in the runtime's thread list. */
      name: string;
      logger: Logger;
      /** Called when the thread ends without being asked to; the process exits with 1 when not given. */
      onFailure?: (error: unknown) => void;
    },
  ) {}

  start(): Promise<void> {
    const worker = new Worker(this.options.file, { name: this.options.name });
    this.worker = worker;
    this.ended = new Promise((resolve) => worker.once('exit', () => resolve()));
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: ThreadMessage) => {
        if (message.kind === READY) {
          ready = true;
          resolve();
        } else if (message.kind === METRICS) {
          this.replies.get(message.request as number)?.(message.metrics as MetricsJson);
          this.replies.delete(message.request as number);
        } else if (message.kind !== STOPPED) {
          this.handlers.get(message.kind)?.(message);
        }
      });
      const fail = (error: unknown) => {
        for (const reply of this.replies.values()) reply([]);
        this.replies.clear();
        if (!ready) {
          reject(error);
          return;
        }
        if (this.stopping) return;
        this.options.logger.fatal({ err: error, thread: this.options.name }, 'a service thread ended unexpectedly');
        if (this.options.onFailure) this.options.onFailure(error);
        else process.exit(1);
      };
      worker.once('error', fail);
      worker.once('exit', (code) => fail(new Error(`the ${this.options.name} thread exited with code ${code}`)));
    });
  }

  /** Handles the thread's messages of one kind. */
  on(kind: string, handler: (message: ThreadMessage) => void): this {
    this.handlers.set(kind, handler);
    return this;
  }

  /** Sends a message to the thread (dropped once it is stopping). */
  post(message: ThreadMessage): void {
    if (!this.stopping) this.worker?.postMessage(message);
  }

  /** The thread's metrics, as its registry gives them (none once it has ended). */
  metrics(): Promise<MetricsJson> {
    const worker = this.worker;
    if (!worker || this.stopping) return Promise.resolve([]);
    const request = this.nextRequest++;
    return new Promise((resolve) => {
      this.replies.set(request, resolve);
      worker.postMessage({ kind: METRICS, request });
    });
  }

  /** Asks the thread to finish and resolves once it has ended (terminating it after `timeoutMs`). */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.worker || this.stopping) return this.ended;
    this.stopping = true;
    this.worker.postMessage({ kind: STOP });
    const timer = setTimeout(() => void this.worker?.terminate(), timeoutMs);
    await this.ended;
    clearTimeout(timer);
  }
}

/**
 * The thread's end of the channel. `ready` tells the service the thread has started; `onStop` is
 * run when the service stops (the thread then ends once its connections are closed). `registry`
 * holds the thread's metrics: the service's metrics listener serves them with its own
 * (ThreadedRegistry). It has no process metrics (the service's registry has them for the process)
 * but the thread's own event loop delay, `worklane_thread_eventloop_lag_p99_seconds{thread}`.
 */
export class ThreadChannel {
  readonly registry: Registry;
  private readonly handlers = new Map<string, (message: ThreadMessage) => void>();
  private stopHandler: (() => Promise<void>) | undefined;

  constructor(service: string, thread: string) {
    if (!parentPort) throw new Error('ThreadChannel is for the entry module of a service thread');
    const port = parentPort;
    this.registry = new promClient.Registry();
    this.registry.setDefaultLabels({ service });
    // The thread's own event loop delay (the process metrics measure the main thread's).
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    new promClient.Gauge({
      name: 'worklane_thread_eventloop_lag_p99_seconds',
      help: "99th percentile of a service thread's event loop delay since the last scrape",
      labelNames: ['thread'],
      registers: [this.registry],
      collect() {
        this.set({ thread }, delay.percentile(99) / 1e9);
        delay.reset();
      },
    });
    port.on('message', (message: ThreadMessage) => {
      if (message.kind === METRICS) {
        this.registry.getMetricsAsJSON().then(
          (metrics) => port.postMessage({ kind: METRICS, request: message.request, metrics }),
          () => port.postMessage({ kind: METRICS, request: message.request, metrics: [] }),
        );
      } else if (message.kind === STOP) {
        void (this.stopHandler?.() ?? Promise.resolve()).finally(() => {
          port.postMessage({ kind: STOPPED });
          port.close();
        });
      } else {
        this.handlers.get(message.kind)?.(message);
      }
    });
  }

  ready(): void {
    parentPort!.postMessage({ kind: READY });
  }

  post(message: ThreadMessage): void {
    parentPort!.postMessage(message);
  }

  on(kind: string, handler: (message: ThreadMessage) => void): this {
    this.handlers.set(kind, handler);
    return this;
  }

  onStop(stop: () => Promise<void>): this {
    this.stopHandler = stop;
    return this;
  }
}

/**
 * A service's registry that adds its threads' metrics at each scrape: series of the same name
 * from the service and a thread are served as one metric (their labels tell them apart).
 */
export class ThreadedRegistry extends promClient.Registry {
  constructor(
    private readonly own: Registry,
    private readonly threads: Pick<ServiceThread, 'metrics'>[],
  ) {
    super();
  }

  override async metrics(): Promise<string> {
    const all = await Promise.all([this.own.getMetricsAsJSON(), ...this.threads.map((thread) => thread.metrics())]);
    return promClient.AggregatorRegistry.aggregate(all.filter((metrics) => metrics.length > 0)).metrics();
  }
}

/**
 * Lowers the calling thread's scheduling priority by `increment` (its nice value), so that on a
 * busy CPU the service's threads started before (which keep theirs) run first. Called by the main
 * thread, which serves the API, once its service threads run: a burst of API work (large pages,
 * refused bodies, their garbage) then waits for the event path rather than the other way round.
 * Linux gives every thread a nice value of its own, and threads started later take their
 * starter's; where the value is the whole process's, both sides are lowered alike and nothing
 * changes. Raising a nice value needs no privilege; a failure is logged and changes nothing else.
 */
export function yieldToServiceThreads(increment: number, logger: Logger): void {
  if (increment <= 0) return;
  try {
    const nice = Math.min(19, getPriority(0) + increment);
    setPriority(0, nice);
    logger.info({ nice }, "the API thread runs below the service's own threads");
  } catch (error) {
    logger.warn({ err: error }, "the API thread's priority could not be lowered; it runs level with the service's own threads");
  }
}
