import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import {
  chooseServicesMode,
  dockerEndpoint,
  dockerReachable,
  elasticMqConfig,
  kafkaEnvironment,
  SERVICE_IMAGES,
  startFerryServices,
} from '@ferry/testing';

const root = path.resolve(__dirname, '../../..');

function testcontainersInstalled(): boolean {
  try {
    require.resolve('testcontainers');
    return true;
  } catch {
    return false;
  }
}

describe('startFerryServices: choosing containers or the native services', () => {
  it.each([
    ['auto', true, true, 'testcontainers'],
    ['auto', false, true, 'native'],
    ['auto', true, false, 'native'],
    ['native', true, true, 'native'],
    ['testcontainers', true, true, 'testcontainers'],
  ] as const)('%s with docker=%s, testcontainers=%s → %s', (requested, docker, testcontainers, expected) => {
    expect(chooseServicesMode(requested, { docker, testcontainers })).toBe(expected);
  });

  it('refuses testcontainers when asked for them and they cannot run, saying why', () => {
    expect(() => chooseServicesMode('testcontainers', { docker: false, testcontainers: true })).toThrow(
      /no Docker engine is reachable/,
    );
    expect(() => chooseServicesMode('testcontainers', { docker: true, testcontainers: false })).toThrow(
      /testcontainers package is not installed/,
    );
  });

  it('detects Docker by connecting to its socket', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ferry-docker-'));
    const socket = path.join(dir, 'docker.sock');
    expect(await dockerReachable({ path: socket })).toBe(false);
    const server: Server = createServer((c) => c.end());
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(await dockerReachable({ path: socket })).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(dockerEndpoint({ DOCKER_HOST: `unix://${socket}` })).toEqual({ path: socket });
    expect(dockerEndpoint({ DOCKER_HOST: 'tcp://10.0.0.5:2376' })).toEqual({ host: '10.0.0.5', port: 2376 });
    expect(dockerEndpoint({})).toEqual({ path: '/var/run/docker.sock' });
  });
});

describe('the container path is pinned to what ferry is tested with', () => {
  it('uses the images of docker-compose.yml and the versions scripts/services runs', () => {
    const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    const images = [...compose.matchAll(/^\s+image:\s*(\S+)/gm)].map((m) => m[1]);
    expect(images.sort()).toEqual(Object.values(SERVICE_IMAGES).sort());
    const pom = (name: string, property: string) =>
      new RegExp(`<${property}>([^<]+)</${property}>`).exec(
        readFileSync(path.join(root, 'scripts', name, 'pom.xml'), 'utf8'),
      )?.[1];
    expect(SERVICE_IMAGES.kafka).toBe(`apache/kafka:${pom('kafka', 'kafka.version')}`);
    expect(SERVICE_IMAGES.sqs).toBe(`softwaremill/elasticmq-native:${pom('elasticmq', 'elasticmq.version')}`);
  });

  it('advertises Kafka and ElasticMQ on the port they are published on', () => {
    expect(kafkaEnvironment(39092)).toMatchObject({
      KAFKA_LISTENERS: 'PLAINTEXT://0.0.0.0:39092,CONTROLLER://127.0.0.1:9093',
      KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://127.0.0.1:39092',
    });
    const conf = elasticMqConfig(39324);
    expect(conf).toContain('host = "127.0.0.1", port = 39324');
    expect(conf).toContain('bind-hostname = "0.0.0.0", bind-port = 39324');
  });
});

describe('startFerryServices on a machine without Docker', () => {
  it('falls back to scripts/services and returns endpoints that answer', async () => {
    const services = await startFerryServices({
      services: ['postgres'],
      nativeScript: path.join(root, 'scripts/services'),
    });
    try {
      const containers = (await dockerReachable()) && testcontainersInstalled();
      expect(services.mode).toBe(containers ? 'testcontainers' : 'native');
      const client = listened(new Client({ connectionString: services.databaseUrl }));
      await client.connect();
      try {
        expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await client.end();
      }
    } finally {
      await services.stop();
    }
  });

  it('checks its options like every ferry options object', async () => {
    await expect(startFerryServices({ mode: 'docker' as never })).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'mode',
    });
    await expect(startFerryServices({ servics: [] } as never)).rejects.toMatchObject({ option: 'servics' });
  });
});
