/**
 * Private Kafka and ElasticMQ brokers for the fault suites, started through `scripts/services` with
 * their own state folder and ports, so a suite can stop, kill and restart them without touching the
 * shared brokers other tests use concurrently.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePorts } from './ports';
import { waitFor } from './waitFor';

const run = promisify(execFile);
export const REPO_ROOT = path.resolve(__dirname, '../..');
const SERVICES = path.join(REPO_ROOT, 'scripts/services');

/** The shared RabbitMQ of the suites that use the user's (FERRY_AMQP_URL). */
export const AMQP_URL = process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * The deadline of a suite's own amqplib connect to the shared RabbitMQ (TCP and handshake): a
 * FERRY_AMQP_URL that never answers fails the suite naming the connect (review 34).
 */
export const AMQP_CONNECT_TIMEOUT_MS = 10_000;

export type PrivateServiceName = 'kafka' | 'elasticmq';

/**
 * The JVM flags of a private broker (FERRY_KAFKA_JVM_FLAGS / FERRY_ELASTICMQ_JVM_FLAGS override
 * them): it lives one file, mostly starting and restarting, where the C2 compiler's and G1's
 * threads cost more than they earn. Measured start-to-ready on the 2-core CI VM (user+sys of the
 * broker, scripts/services' own JVMs besides): Kafka 7.3-8.4 s with G1 and C2, 4.7-4.9 s with
 * these (+ StorageTool format 4.0 -> 3.4 s); ElasticMQ 5.2-5.5 s -> 2.6-2.9 s.
 */
export const PRIVATE_BROKER_JVM_FLAGS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData';

/** Whether a process exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export class PrivateBroker {
  private started = false;

  private constructor(
    readonly service: PrivateServiceName,
    readonly dir: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Allocates a state folder and free ports; nothing runs until `start()`. */
  static async create(service: PrivateServiceName): Promise<PrivateBroker> {
    // Ports first: nothing is made on disk before the last step that can fail (review 75).
    const ports: Record<string, string> = {};
    let port: number;
    if (service === 'kafka') {
      const [broker, controller] = await freePorts(29100, 2, { span: 800 });
      port = broker!;
      ports.FERRY_KAFKA_PORT = String(broker);
      ports.FERRY_KAFKA_CONTROLLER_PORT = String(controller);
      ports.FERRY_KAFKA_HEAP = '-Xms128m -Xmx384m';
      ports.FERRY_KAFKA_JVM_FLAGS = process.env.FERRY_KAFKA_JVM_FLAGS ?? PRIVATE_BROKER_JVM_FLAGS;
    } else {
      [port] = (await freePorts(29900, 1, { span: 400 })) as [number];
      ports.FERRY_SQS_PORT = String(port);
      ports.FERRY_ELASTICMQ_JVM_FLAGS = process.env.FERRY_ELASTICMQ_JVM_FLAGS ?? PRIVATE_BROKER_JVM_FLAGS;
    }
    const dir = mkdtempSync(path.join(tmpdir(), `ferry-fault-${service}-`));
    try {
      // Reuse the jars the project's own `scripts/services up` fetched, so no Maven run is needed.
      const shared = path.join(REPO_ROOT, '.services', service, 'libs');
      if (existsSync(path.join(shared, '.complete'))) {
        mkdirSync(path.join(dir, service), { recursive: true });
        symlinkSync(shared, path.join(dir, service, 'libs'));
      }
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return new PrivateBroker(service, dir, port, { ...process.env, FERRY_SERVICES_DIR: dir, ...ports });
  }

  /** `host:port` for kafkajs. */
  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  /** `http://127.0.0.1:port` for the SQS client. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private get pidFile(): string {
    return path.join(this.dir, this.service, `${this.service}.pid`);
  }

  /** The broker's pid from the pid file `scripts/services` wrote, or null. */
  pid(): number | null {
    try {
      const pid = Number(readFileSync(this.pidFile, 'utf8').trim().split(/\s+/)[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  }

  private async services(action: 'up' | 'down'): Promise<string> {
    try {
      const { stdout } = await run(SERVICES, [action, this.service], {
        env: this.env,
        cwd: REPO_ROOT,
        timeout: 150_000,
      });
      return stdout;
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(
        `scripts/services ${action} ${this.service} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
      );
    }
  }

  /** Starts the broker (or finds it running) and waits for its readiness check. */
  async start(): Promise<void> {
    // Set before `up`, which may have started the broker when it fails (a readiness wait that
    // timed out): dispose() then runs `down`, which stops only a process `up` recorded (review 75).
    this.started = true;
    const out = await this.services('up');
    if (!/\b(started|reused)\b/.test(out) || !out.includes(`127.0.0.1:${this.port}`))
      throw new Error(`unexpected output of scripts/services up ${this.service}: ${out}`);
    if (out.includes('not started by ferry'))
      throw new Error(`port ${this.port} answered but is not our private ${this.service}: ${out}`);
  }

  /** Orderly stop (SIGTERM, then SIGKILL after the script's timeout). */
  async stop(): Promise<void> {
    await this.services('down');
  }

  /** Crash: SIGKILL the broker process and wait until it is gone. */
  async kill(): Promise<void> {
    const pid = this.pid();
    if (pid === null) throw new Error(`${this.service}: no pid file at ${this.pidFile}`);
    process.kill(pid, 'SIGKILL');
    await waitFor(`${this.service} pid ${pid} to exit`, () => !processAlive(pid), { timeoutMs: 15_000 });
  }

  async restart(mode: 'stop' | 'kill' = 'stop'): Promise<void> {
    if (mode === 'kill') await this.kill();
    else await this.stop();
    await this.start();
  }

  /** Stops the broker if it runs and removes its state folder. */
  async dispose(): Promise<void> {
    // `down` kills only the process it recorded (pid and start time checked), never a reused pid.
    if (this.started) await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
