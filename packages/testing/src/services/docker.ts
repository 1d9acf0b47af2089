import { connect } from 'node:net';
import { clearTimeout, setTimeout } from '../realTimers';

/** Where the Docker engine listens: DOCKER_HOST (unix:// or tcp://), else /var/run/docker.sock. */
export function dockerEndpoint(
  env: NodeJS.ProcessEnv = process.env,
): { path: string } | { host: string; port: number } {
  const host = env.DOCKER_HOST;
  if (host?.startsWith('tcp://')) {
    const url = new URL(host);
    return { host: url.hostname, port: Number(url.port || 2375) };
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
