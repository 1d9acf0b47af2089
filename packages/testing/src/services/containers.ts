import { createServer } from 'node:net';
import { FerryError } from '@ferry/core';
import { realDelay } from '../realTimers';
import { CallUnsettled, WaitDeadline } from '../waitDeadline';
import { elasticMqConfig, kafkaEnvironment, SERVICE_IMAGES, type FerryService } from './images';
import type { ServiceEndpoints } from './native';

/** The part of testcontainers (an optional peer dependency) this module uses. */
interface StartedContainer {
  getHost(): string;
  getMappedPort(port: number): number;
  stop(): Promise<unknown>;
}
interface ContainerBuilder {
  withEnvironment(env: Record<string, string>): ContainerBuilder;
  withExposedPorts(...ports: (number | { container: number; host: number })[]): ContainerBuilder;
  withWaitStrategy(strategy: unknown): ContainerBuilder;
  withCopyContentToContainer(files: { content: string; target: string }[]): ContainerBuilder;
  withCommand(command: string[]): ContainerBuilder;
  withStartupTimeout(ms: number): ContainerBuilder;
  start(): Promise<StartedContainer>;
}
export interface TestcontainersModule {
  GenericContainer: new (image: string) => ContainerBuilder;
  Wait: { forLogMessage(message: RegExp, times?: number): unknown };
}

/** testcontainers if it is installed, else null. */
export function loadTestcontainers(): TestcontainersModule | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('testcontainers') as TestcontainersModule;
  } catch (error) {
    // Absent: null. Installed but failing to load (testcontainers 12 on Node 20 throws at require)
    // is said as such, with its error: "not installed" sent operators to install what they had
    // (review 44).
    const code = (error as { code?: unknown } | null)?.code;
    const message = error instanceof Error ? error.message : String(error);
    if (code === 'MODULE_NOT_FOUND' && message.includes("'testcontainers'")) return null;
    throw new Error(`the testcontainers package is installed but failed to load: ${message}`, {
      cause: error,
    });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts `service`'s container, its wait strategy given at most `startupMs`. */
async function startOne(
  tc: TestcontainersModule,
  service: FerryService,
  startupMs: number,
): Promise<[StartedContainer, Partial<ServiceEndpoints>]> {
  const { GenericContainer, Wait } = tc;
  const image = new GenericContainer(SERVICE_IMAGES[service]).withStartupTimeout(startupMs);
  if (service === 'postgres') {
    const c = await image
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'test' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    return [c, { databaseUrl: `postgresql://postgres@${c.getHost()}:${c.getMappedPort(5432)}/test` }];
  }
  if (service === 'rabbitmq') {
    const c = await image
      .withExposedPorts(5672)
      .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
      .start();
    return [c, { amqpUrl: `amqp://guest:guest@${c.getHost()}:${c.getMappedPort(5672)}` }];
  }
  // Kafka and ElasticMQ put their own address in what they return (metadata, queue URLs), so
  // they listen on the same free port inside and outside the container.
  const port = await freePort();
  if (service === 'kafka') {
    const c = await image
      .withEnvironment(kafkaEnvironment(port))
      .withExposedPorts({ container: port, host: port })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .start();
    return [c, { kafkaBrokers: [`127.0.0.1:${port}`] }];
  }
  const c = await image
    .withCopyContentToContainer([{ content: elasticMqConfig(port), target: '/opt/ferry-elasticmq.conf' }])
    .withCommand(['-Dconfig.file=/opt/ferry-elasticmq.conf'])
    .withExposedPorts({ container: port, host: port })
    .withWaitStrategy(Wait.forLogMessage(/started/i))
    .start();
  return [c, { sqsEndpoint: `http://127.0.0.1:${port}` }];
}

/** The longest a failed start waits for the containers it started to be removed. */
const REMOVE_GRACE_MS = 10_000;

/**
 * What became of removing the containers a failed start left: waited for at most `ms`, so a
 * Docker engine gone silent (what a start past its deadline often is) cannot hold the call after
 * all; the removal goes on in the background.
 */
async function removedWithin(removal: Promise<void>, ms: number): Promise<string> {
  const over = new AbortController();
  const done = removal.then(() => 'the containers started were removed');
  void done.finally(() => over.abort());
  return Promise.race([
    done,
    realDelay(ms, over.signal, true).then(
      () =>
        `removing the containers started had not finished after ${ms} ms (it goes on; check \`docker ps\`)`,
    ),
  ]);
}

/**
 * Starts each service in its own container; stop() removes them all. Within `timeoutMs` (the
 * option of startFerryServices) or FERRY_TIMEOUT, the containers started removed: a pull or start
 * that never ends (a registry or Docker engine gone silent) held the call for ever, and each wait
 * strategy had testcontainers' own 60 s (review 106). A container whose start() settles after the
 * deadline is removed then.
 */
export async function startContainers(
  tc: TestcontainersModule,
  services: readonly FerryService[],
  timeoutMs: number,
): Promise<{ endpoints: Partial<ServiceEndpoints>; stop(): Promise<void> }> {
  const started: StartedContainer[] = [];
  const stop = async () => {
    await Promise.allSettled(started.map((c) => c.stop()));
  };
  const deadline = new WaitDeadline(timeoutMs);
  const startedAt = performance.now();
  let endpoints: Partial<ServiceEndpoints> = {};
  let current: FerryService | null = null;
  try {
    for (const service of services) {
      current = service;
      const starting = startOne(tc, service, Math.max(1, timeoutMs - (performance.now() - startedAt)));
      const [container, found] = await deadline
        .race(() => starting)
        .catch((error: unknown) => {
          if (CallUnsettled.is(error)) {
            starting.then(([late]) => late.stop()).catch(() => undefined);
          }
          throw error;
        });
      started.push(container);
      endpoints = { ...endpoints, ...found };
    }
  } catch (cause) {
    const removal = await removedWithin(stop(), Math.min(REMOVE_GRACE_MS, timeoutMs));
    if (CallUnsettled.is(cause)) {
      throw new FerryError(
        'FERRY_TIMEOUT',
        `the service containers were not ready within ${timeoutMs} ms (timeoutMs): ${String(current)} was still starting; ${removal}`,
        { cause },
      );
    }
    throw new FerryError(
      'FERRY_TRANSPORT_ERROR',
      `starting the service containers failed: ${String(cause)}; ${removal}`,
      { cause },
    );
  } finally {
    deadline.end();
  }
  return { endpoints, stop };
}
