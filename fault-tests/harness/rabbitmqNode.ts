/**
 * A private RabbitMQ node of the machine's installation (own node name, ports, Mnesia and log
 * folders, no plugins), so a suite can stop or crash it while other tests use the shared node.
 * Messages and durable queues persist in its Mnesia folder across restarts.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { freePorts } from './ports';
import { processAlive } from './brokers';
import { waitFor } from './waitFor';
import { adminCall, evaluateOn, unackedByQueue } from '../../test-support/rabbitErlCall';

const run = promisify(execFile);

function rabbitUser(): { uid: number; gid: number } | null {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('rabbitmq:'));
    if (!line) return null;
    const [, , uid, gid] = line.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return null;
  }
}

export class RabbitNode {
  private running = false;

  private constructor(
    readonly nodeName: string,
    readonly port: number,
    readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async create(): Promise<RabbitNode> {
    // The distribution port is AMQP port + 20000 (RabbitMQ's own convention).
    const [port] = (await freePorts(25700, 1, { span: 400, offsets: [20000] })) as [number];
    const dir = mkdtempSync(path.join(tmpdir(), 'ferry-fault-rabbit-'));
    try {
      const nodeName = `ferryfault${port}@localhost`;
      writeFileSync(path.join(dir, 'enabled_plugins'), '[].\n');
      // The machine's rabbitmq.conf pins the listener to 5672; our own config file replaces it.
      writeFileSync(
        path.join(dir, 'rabbitmq.conf'),
        `listeners.tcp.local = 127.0.0.1:${port}\nloopback_users.guest = true\n`,
      );
      // rabbitmq-server run as root switches to the rabbitmq user, which must own the folders.
      const owner = process.getuid?.() === 0 ? rabbitUser() : null;
      chmodSync(dir, 0o755);
      if (owner) {
        for (const file of ['', 'enabled_plugins', 'rabbitmq.conf'])
          chownSync(path.join(dir, file), owner.uid, owner.gid);
      }
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        RABBITMQ_NODENAME: nodeName,
        RABBITMQ_NODE_PORT: String(port),
        RABBITMQ_DIST_PORT: String(port + 20000),
        RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq.conf'),
        RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
        RABBITMQ_LOG_BASE: path.join(dir, 'log'),
        RABBITMQ_PID_FILE: path.join(dir, 'pid'),
        RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
      };
      return new RabbitNode(nodeName, port, dir, env);
    } catch (error) {
      // The caller never gets the object to dispose: remove the folder here (review 75).
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  /** The Erlang VM's pid (from RABBITMQ_PID_FILE), or null. */
  pid(): number | null {
    try {
      const pid = Number(readFileSync(path.join(this.dir, 'pid'), 'utf8').trim());
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  }

  private async canConnect(): Promise<boolean> {
    const connection = await amqp.connect(this.url, { timeout: 2000 });
    await connection.close();
    return true;
  }

  /** Starts the node detached and waits until an AMQP connection succeeds. */
  async start(): Promise<void> {
    // Set first: a start that fails or times out may leave the node booting; dispose() then stops
    // it (`rabbitmqctl stop`, a failure ignored) before removing the folder (review 75).
    this.running = true;
    await run('rabbitmq-server', ['-detached'], { env: this.env, cwd: '/tmp', timeout: 30_000 });
    // A node boots in seconds alone; at load 20+ on 2 cores it took over a minute.
    await waitFor(`RabbitMQ node ${this.nodeName} to accept AMQP connections`, () => this.canConnect(), {
      timeoutMs: 150_000,
      intervalMs: 250,
    });
  }

  private async waitGone(pid: number | null): Promise<void> {
    if (pid !== null)
      await waitFor(`RabbitMQ pid ${pid} to exit`, () => !processAlive(pid), { timeoutMs: 30_000 });
    await waitFor(`port ${this.port} to close`, async () => !(await this.canConnect().catch(() => false)), {
      timeoutMs: 30_000,
    });
  }

  /**
   * rabbitmqctl `args` on this node: each call boots an Erlang VM (about 1 s of CPU), so the
   * methods below ask the node through erl_call first (test-support/rabbitErlCall.ts, about 20 ms)
   * and run this where it cannot answer.
   */
  private async ctl(args: readonly string[], timeout = 60_000): Promise<string> {
    return (await run('rabbitmqctl', ['-n', this.nodeName, ...args], { env: this.env, cwd: '/tmp', timeout }))
      .stdout;
  }

  /**
   * Orderly stop, as `rabbitmqctl stop` (rabbit:stop_and_halt on the node, started by erl_call in a
   * process of the node's own, since the call never answers), then wait for the VM to exit.
   */
  async stop(): Promise<void> {
    const pid = this.pid();
    const asked = await evaluateOn(this.nodeName, 'spawn(fun() -> rabbit:stop_and_halt() end), "ok".');
    if (asked !== 'ok') await this.ctl(['stop']);
    await this.waitGone(pid);
    this.running = false;
  }

  /**
   * Deliveries of `queue` handed to a consumer and not acknowledged yet (`rabbitmqctl
   * list_queues`): a passive declare counts only the ready ones, so a queue can read empty while
   * a consumer still holds deliveries it has not settled.
   */
  async unacknowledged(queue: string): Promise<number> {
    const counts = await unackedByQueue(this.nodeName);
    if (counts !== null) {
      const count = counts.get(queue);
      if (count === undefined) throw new Error(`${this.nodeName}: no queue ${queue} on the node`);
      return count;
    }
    const stdout = await this.ctl(
      ['-q', '--no-table-headers', 'list_queues', 'name', 'messages_unacknowledged'],
      30_000,
    );
    for (const line of stdout.split('\n')) {
      const [name, count] = line.trim().split(/\s+/);
      if (name === queue) return Number(count);
    }
    throw new Error(`${this.nodeName}: no queue ${queue} in list_queues`);
  }

  /** Crash: SIGKILL the Erlang VM (unflushed state is lost exactly as in a power cut of the node). */
  async kill(): Promise<void> {
    const pid = this.pid();
    if (pid === null) throw new Error(`${this.nodeName}: no pid file`);
    process.kill(pid, 'SIGKILL');
    await this.waitGone(pid);
    this.running = false;
  }

  /**
   * Raises (`true`) or clears the node's memory alarm: with the high watermark at 0 the node
   * blocks every connection that publishes (it stops reading their sockets) until it is set back
   * to RabbitMQ's default, 0.4 of the machine's memory.
   */
  async memoryAlarm(on: boolean): Promise<void> {
    const fraction = on ? '0.0' : '0.4';
    const call = `vm_memory_monitor:set_vm_memory_high_watermark(${fraction})`;
    if ((await adminCall(this.nodeName, call)) === null)
      await this.ctl(['set_vm_memory_high_watermark', on ? '0' : '0.4']);
  }

  /**
   * Sets the `rabbit` application's environment `key` to the Erlang integer `value` on the running
   * node (`rabbitmqctl eval`), e.g. `consumer_timeout` (ms; read by each channel as it opens) and
   * `channel_tick_interval` (ms; how often a channel checks it, 60,000 by default).
   */
  async setRabbitEnv(key: string, value: number): Promise<void> {
    if (!/^[a-z_]+$/.test(key) || !Number.isSafeInteger(value)) throw new Error(`bad env ${key}=${value}`);
    const call = `application:set_env(rabbit, ${key}, ${value})`;
    if ((await adminCall(this.nodeName, call)) === null) await this.ctl(['eval', `${call}.`]);
  }

  async restart(mode: 'stop' | 'kill' = 'stop'): Promise<void> {
    if (mode === 'kill') await this.kill();
    else await this.stop();
    await this.start();
  }

  async dispose(): Promise<void> {
    if (this.running) await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
