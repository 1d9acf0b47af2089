import { connect } from 'node:net';
import { FerryConfigError } from '@ferry/core';
import { clearTimeout, setTimeout } from '../realTimers';

/**
 * Where the Docker engine listens: DOCKER_HOST (unix:// or tcp://), else /var/run/docker.sock. A
 * tcp:// DOCKER_HOST that does not parse, or names no host, is FERRY_CONFIG_INVALID naming it.
 */
export function dockerEndpoint(
  env: NodeJS.ProcessEnv = process.env,
): { path: string } | { host: string; port: number } {
  const host = env.DOCKER_HOST;
  if (host?.startsWith('tcp://')) {
    const url = URL.canParse(host) ? new URL(host) : null;
    if (url === null || url.hostname === '') {
      throw new FerryConfigError('DOCKER_HOST', 'is not a URL tcp://host[:port]');
    }
    return {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: endpointPort('DOCKER_HOST', Number(url.port || 2375)),
    };
  }
  return { path: host?.startsWith('unix://') ? host.slice('unix://'.length) : '/var/run/docker.sock' };
}

/** True when something accepts a connection at the Docker endpoint within `timeoutMs`. */
export function dockerReachable(
  endpoint: { path: string } | { host: string; port: number } = dockerEndpoint(),
  timeoutMs = 2_000,
): Promise<boolean> {
  return acceptsConnection(endpoint, timeoutMs);
}

/**
 * True when something accepts a connection at `endpoint` (a socket path or a host and port) within
 * `timeoutMs`: the probe of the Docker engine and of the native path's endpoints.
 */
export function acceptsConnection(
  endpoint: { path: string } | { host: string; port: number },
  timeoutMs: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(endpoint);
    const done = (reachable: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reachable);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * `port` when a client can connect to it (an integer 1 to 65535), else FERRY_CONFIG_INVALID naming
 * `variable`: every endpoint variable's port passes here (review 109: pg reads `?port=70000` and
 * `?port=abc` as 70000 and NaN, a Kafka broker's port was any 5 digits, and net.connect threw its
 * raw RangeError). Only the port is shown, never the variable's text (it may carry a password).
 */
export function endpointPort(variable: string, port: number): number {
  if (Number.isInteger(port) && port >= 1 && port <= 65_535) return port;
  throw new FerryConfigError(variable, `port ${String(port)} is not a port number (1 to 65535)`);
}
