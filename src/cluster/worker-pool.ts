// The workers of `serve --workers N` as the primary supervises them: one per slot (1..N, part of segment
// names), forked with its slot and the shared listener in TC_* variables; one that dies after start-up is
// restarted with back-off, one that exits 74 or 78 (or dies before all started) fails the collector with
// its status, since restarting cannot help; on stop each gets SIGTERM, and SIGKILL past the stop bound.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { EXIT } from '../errors.js';
import { isWorkerMessage, type PrimaryMessage, type WorkerMessage } from './messages.js';
import { RestartBackoff } from './restart-backoff.js';

/** Past this, a worker that does not stop is killed: inside systemd's 10 s stop bound (TimeoutStopSec). */
const STOP_KILL_MS = 9500;

/** What the pool tells the primary. */
export interface WorkerPoolEvents {
  /** A message from the worker in `slot` (a `listening` one after the pool has counted it as ready). */
  message(worker: Worker, slot: number, message: WorkerMessage): void;
  /** Every worker listens: start-up is done (once). */
  started(): void;
  /** The worker in `slot` is gone: release what it held. */
  exited(worker: Worker, slot: number): void;
  /** Restarting cannot help (a failed sync, a bad configuration, or a worker that never started). */
  failed(status: number): void;
  /** After stop(), the last worker is gone (once). */
  stopped(): void;
}

export interface WorkerPoolOptions {
  workers: number;
  /** An inherited listening socket (systemd socket activation), passed on to every worker. */
  listenFd?: number;
  logger: Logger;
  now: () => number;
  events: WorkerPoolEvents;
}

export class WorkerPool {
  private readonly slots = new Map<number, Worker>();
  private readonly ready = new Set<number>();
  private readonly backoff: RestartBackoff;
  private allStarted = false;
  private stopping = false;
  private stoppedTold = false;

  constructor(private readonly options: WorkerPoolOptions) {
    this.backoff = new RestartBackoff({ now: options.now });
  }

  /** True once every worker has listened at least once. */
  get started(): boolean {
    return this.allStarted;
  }

  /** How many workers listen now. */
  get listening(): number {
    return this.ready.size;
  }

  /** How many workers are alive. */
  get size(): number {
    return this.slots.size;
  }

  /** The live workers: slot and pid. */
  list(): { id: number; pid: number }[] {
    return [...this.slots].map(([id, w]) => ({ id, pid: w.process.pid ?? 0 }));
  }

  /** Forks a worker for every slot. */
  start(): void {
    for (let slot = 1; slot <= this.options.workers; slot++) this.fork(slot);
  }

  send(worker: Worker, message: PrimaryMessage): void {
    if (worker.isConnected()) worker.send(message);
  }

  broadcast(message: PrimaryMessage): void {
    for (const worker of this.slots.values()) this.send(worker, message);
  }

  /** SIGTERM to every worker (each finishes its in-flight requests), SIGKILL to those left past the bound. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const worker of this.slots.values()) worker.process.kill('SIGTERM');
    const force = setTimeout(() => {
      for (const [slot, worker] of this.slots) {
        this.options.logger.error(
          { worker: slot, pid: worker.process.pid },
          'worker did not stop in time; killing it',
        );
        worker.process.kill('SIGKILL');
      }
    }, STOP_KILL_MS);
    force.unref();
    this.tellStoppedWhenEmpty();
  }

  private fork(slot: number): void {
    const env: Record<string, string> = {
      TC_WORKER_ID: String(slot),
      TC_WORKERS: String(this.options.workers),
    };
    if (this.options.listenFd !== undefined) env.TC_LISTEN_FD = String(this.options.listenFd);
    const worker = cluster.fork(env);
    this.slots.set(slot, worker);
    this.backoff.started(slot);
    worker.on('message', (message: unknown) => {
      if (isWorkerMessage(message)) this.onMessage(worker, slot, message);
    });
    worker.on('exit', (code, signal) => this.onExit(worker, slot, code, signal));
  }

  private onMessage(worker: Worker, slot: number, message: WorkerMessage): void {
    if (message.tc === 'listening') this.ready.add(slot);
    this.options.events.message(worker, slot, message);
    if (message.tc !== 'listening') return;
    if (this.allStarted) {
      this.options.logger.info({ worker: slot, pid: worker.process.pid }, 'worker restarted and listening');
    } else if (this.ready.size === this.options.workers) {
      this.allStarted = true;
      this.options.events.started();
    }
  }

  private onExit(worker: Worker, slot: number, code: number | null, signal: string | null): void {
    const { logger, events } = this.options;
    events.exited(worker, slot);
    this.ready.delete(slot);
    if (this.slots.get(slot) === worker) this.slots.delete(slot);
    const pid = worker.process.pid;
    if (this.stopping) {
      logger.info({ worker: slot, pid, code, signal }, 'worker stopped');
    } else if (code === EXIT.IOERR || code === EXIT.CONFIG || !this.allStarted) {
      // Restarting cannot help: a failed sync (the log cannot be trusted), a bad configuration, or a
      // worker that could not start at all. systemd sees the status and does not loop.
      logger.fatal(
        { worker: slot, pid, code, signal },
        'worker failed; stopping the collector with its status',
      );
      events.failed(code ?? 1);
    } else {
      const delayMs = this.backoff.nextDelay(slot);
      logger.error({ worker: slot, pid, code, signal, restartInMs: delayMs }, 'worker died; restarting it');
      setTimeout(() => {
        if (!this.stopping) this.fork(slot);
      }, delayMs).unref();
    }
    if (this.stopping) this.tellStoppedWhenEmpty();
  }

  /** Once, however it is reached: stop() with no worker alive, or the last worker's exit after stop(). */
  private tellStoppedWhenEmpty(): void {
    if (this.slots.size > 0 || this.stoppedTold) return;
    this.stoppedTold = true;
    this.options.events.stopped();
  }
}
