/**
 * Review 106 (from the last note's list), failing test: `startFerryServices({ timeoutMs })` held
 * its deadline on the native path only. On the containers path a container whose image pull or
 * start never ends (a registry that stops answering, a Docker engine gone silent) held the
 * call for ever, and testcontainers' own wait strategies gave each container 60 s whatever
 * `timeoutMs` said. What should happen: the containers path rejects with FERRY_TIMEOUT at
 * `timeoutMs`, removes what it started (a container that finishes starting after the deadline
 * too), and gives each container's wait strategy no more than the time left.
 *
 * No Docker engine runs here: testcontainers is stood in for by a module of the shape
 * startContainers uses (the deadline is ferry's logic, not Docker's).
 */
import { isFerryError } from '@ferry/core';
import { startContainers, type TestcontainersModule } from '../src/services/containers';

interface Fake {
  readonly module: TestcontainersModule;
  readonly startupTimeouts: number[];
  readonly stopped: string[];
  /** Resolves the start() of the container of `image` that is still pending. */
  finish(image: string): void;
}

/** A testcontainers whose containers start at once, except those of `hanging` images, which start only when finish() says. */
function fakeTestcontainers(hanging: readonly string[], silentStop = false): Fake {
  const startupTimeouts: number[] = [];
  const stopped: string[] = [];
  const pending = new Map<string, () => void>();
  class Builder {
    constructor(private readonly image: string) {}
    withEnvironment(): Builder {
      return this;
    }
    withExposedPorts(): Builder {
      return this;
    }
    withWaitStrategy(): Builder {
      return this;
    }
    withCopyContentToContainer(): Builder {
      return this;
    }
    withCommand(): Builder {
      return this;
    }
    withStartupTimeout(ms: number): Builder {
      startupTimeouts.push(ms);
      return this;
    }
    start() {
      const image = this.image;
      const container = {
        getHost: () => '127.0.0.1',
        getMappedPort: (port: number) => port,
        stop: async () => {
          stopped.push(image);
          if (silentStop) await new Promise(() => undefined);
        },
      };
      if (!hanging.some((h) => image.startsWith(h))) return Promise.resolve(container);
      return new Promise<typeof container>((resolve) =>
        pending.set(image.split(':')[0]!, () => resolve(container)),
      );
    }
  }
  return {
    module: {
      GenericContainer: Builder as unknown as TestcontainersModule['GenericContainer'],
      Wait: { forLogMessage: () => ({}) },
    },
    startupTimeouts,
    stopped,
    finish: (image) => pending.get(image)?.(),
  };
}

describe('review106: the containers path of startFerryServices holds timeoutMs', () => {
  it('rejects with FERRY_TIMEOUT at the deadline and removes every container it started, also one that starts late', async () => {
    const fake = fakeTestcontainers(['rabbitmq']);
    const outcome = await startContainers(fake.module, ['postgres', 'rabbitmq'], 300).then(
      () => 'started',
      (error: unknown) => (isFerryError(error) ? error.code : error),
    );
    expect(outcome).toBe('FERRY_TIMEOUT');
    expect(fake.stopped.map((image) => image.split(':')[0])).toEqual(['postgres']);
    fake.finish('rabbitmq');
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.stopped.map((image) => image.split(':')[0]).sort()).toEqual(['postgres', 'rabbitmq']);
  });

  it("gives each container's wait strategy at most the time left of timeoutMs", async () => {
    const fake = fakeTestcontainers([]);
    const started = await startContainers(fake.module, ['postgres', 'rabbitmq'], 5_000);
    await started.stop();
    expect(fake.startupTimeouts).toHaveLength(2);
    for (const ms of fake.startupTimeouts) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(5_000);
    }
  });

  it('returns at the deadline also when removing the started containers does not answer (a Docker engine gone silent)', async () => {
    const fake = fakeTestcontainers(['rabbitmq'], true);
    const outcome = await Promise.race([
      startContainers(fake.module, ['postgres', 'rabbitmq'], 300).then(
        () => 'started',
        (error: unknown) => (isFerryError(error) ? error.code : error),
      ),
      new Promise((resolve) => setTimeout(() => resolve('still pending after 20 s'), 20_000).unref()),
    ]);
    expect(outcome).toBe('FERRY_TIMEOUT');
  });
});
