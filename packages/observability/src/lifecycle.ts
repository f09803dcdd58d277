import type { Logger } from './logger';

export interface ShutdownStep {
  name: string;
  run(): Promise<void> | void;
}

/**
 * Readiness and graceful shutdown of one process. On SIGTERM or SIGINT it reports not ready,
 * then runs the registered steps in order (stop taking work, finish in-flight work, close
 * connections, flush telemetry) and exits; if the steps outlast the deadline it exits anyway.
 */
export class Lifecycle {
  private readonly steps: ShutdownStep[] = [];
  private stopping = false;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /** False from the moment shutdown begins; `/readyz` and gRPC health report it. */
  get ready(): boolean {
    return !this.stopping;
  }

  /** Steps run in the order they were added. */
  onShutdown(name: string, run: ShutdownStep['run']): this {
    this.steps.push({ name, run });
    return this;
  }

  /** Installs the signal handlers; call once the process is serving. */
  handleSignals(exit: (code: number) => void = (code) => process.exit(code)): void {
    const begin = (signal: NodeJS.Signals) => {
      this.logger.info({ signal }, 'shutting down');
      void this.shutdown().then(exit);
    };
    process.once('SIGTERM', begin);
    process.once('SIGINT', begin);
  }

  /** Runs every step within the deadline; resolves to the exit code. */
  async shutdown(): Promise<number> {
    if (this.stopping) return 0;
    this.stopping = true;
    let deadline: NodeJS.Timeout | undefined;
    const timedOut = new Promise<number>((resolve) => {
      deadline = setTimeout(() => {
        this.logger.error({ timeoutMs: this.timeoutMs }, 'shutdown deadline passed; exiting with work unfinished');
        resolve(1);
      }, this.timeoutMs);
    });
    const graceful = (async () => {
      let code = 0;
      for (const step of this.steps) {
        try {
          await step.run();
        } catch (error) {
          code = 1;
          this.logger.error({ err: error, step: step.name }, 'shutdown step failed');
        }
      }
      return code;
    })();
    const code = await Promise.race([graceful, timedOut]);
    clearTimeout(deadline);
    return code;
  }
}
