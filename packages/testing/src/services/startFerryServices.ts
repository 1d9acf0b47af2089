import { FerryConfigError } from '@ferry/core';
import { knownKeysOption, oneOfOption, timerOption } from '@ferry/core/transport';
import { loadTestcontainers, startContainers, type TestcontainersModule } from './containers';
import { dockerEndpoint, dockerReachable } from './docker';
import { ALL_SERVICES, type FerryService } from './images';
import {
  envValue,
  existingScript,
  findServicesScript,
  nativeEndpoints,
  startNativeServices,
  type ServiceEndpoints,
} from './native';

export type ServicesMode = 'auto' | 'testcontainers' | 'native';

export interface StartFerryServicesOptions {
  /** Which services to start. Default all four. */
  services?: readonly FerryService[];
  /** Default `FERRY_SERVICES_MODE`, else 'auto': containers where Docker and testcontainers are there. */
  mode?: ServicesMode;
  /** The native path's script. Default `FERRY_SERVICES_SCRIPT`, else `scripts/services` above the cwd. */
  nativeScript?: string;
  /** Deadline for the services to be ready, on either path. Default 300,000 ms. */
  timeoutMs?: number;
}

export interface FerryServices extends ServiceEndpoints {
  readonly mode: 'testcontainers' | 'native';
  readonly services: readonly FerryService[];
  /** Removes the containers; on the native path does nothing (the services are shared). */
  stop(): Promise<void>;
}

/** The pure decision: containers only where both Docker and testcontainers are available. */
export function chooseServicesMode(
  requested: ServicesMode,
  available: { docker: boolean; testcontainers: boolean },
): 'testcontainers' | 'native' {
  if (requested === 'native') return 'native';
  const containers = available.docker && available.testcontainers;
  if (requested === 'testcontainers' && !containers) {
    const missing = available.docker
      ? 'the testcontainers package is not installed'
      : 'no Docker engine is reachable';
    throw new FerryConfigError('mode', `'testcontainers' was requested but ${missing}`);
  }
  return containers ? 'testcontainers' : 'native';
}

const KEYS = { services: true, mode: true, nativeScript: true, timeoutMs: true } as const;
const MODES: readonly ServicesMode[] = ['auto', 'testcontainers', 'native'];

/**
 * PostgreSQL, RabbitMQ, Kafka and an SQS endpoint for an application's integration tests, at the
 * versions ferry is tested with (SERVICE_IMAGES). With a reachable Docker engine and the
 * `testcontainers` package, each runs in a throw-away container; otherwise ferry's
 * `scripts/services up` reuses or starts them natively. Call `stop()` when done.
 */
export async function startFerryServices(options: StartFerryServicesOptions = {}): Promise<FerryServices> {
  options = knownKeysOption('', options, KEYS);
  const services = options.services ?? ALL_SERVICES;
  services.forEach((service, i) => oneOfOption(`services[${i}]`, service, ALL_SERVICES));
  // Named as the user gave it: the option, else the variable (review 90: a mistyped variable was
  // reported as the option `mode` nobody passed).
  const modeVariable = envValue(process.env, 'FERRY_SERVICES_MODE');
  const requested =
    options.mode === undefined && modeVariable !== undefined
      ? oneOfOption('FERRY_SERVICES_MODE', modeVariable, MODES)
      : oneOfOption('mode', options.mode ?? 'auto', MODES);
  const timeoutMs = timerOption('timeoutMs', options.timeoutMs ?? 300_000, 1);
  const tc: TestcontainersModule | null = requested === 'native' ? null : loadTestcontainers();
  const docker = requested === 'native' ? false : await dockerReachable(dockerEndpoint());
  const mode = chooseServicesMode(requested, { docker, testcontainers: tc !== null });
  if (mode === 'testcontainers' && tc) {
    const { endpoints, stop } = await startContainers(tc, services, timeoutMs);
    return { ...nativeEndpoints(), ...endpoints, mode, services, stop };
  }
  const endpoints = await startNativeServices(
    services,
    () =>
      options.nativeScript === undefined
        ? findServicesScript(process.cwd())
        : existingScript('nativeScript', options.nativeScript),
    timeoutMs,
  );
  return { ...endpoints, mode, services, stop: async () => undefined };
}
