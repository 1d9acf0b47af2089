/**
 * The official RabbitMQ Java client (com.rabbitmq:amqp-client) for tests that publish what
 * amqplib cannot: test/java/pom.xml fetched into .services/java-clients/amqp-client-<version>/
 * (git-ignored) on the first run, test/java/*.java run with it (test-support/javaClients.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPOSITORY_ROOT, mavenJars, runJavaSource } from '../../../../test-support/javaClients';

const JAVA_DIR = path.join(__dirname, '..', 'java');
const POM = path.join(JAVA_DIR, 'pom.xml');

/** The folder of the client's jars, fetched with Maven on the first call. */
export function javaClientJars(): Promise<string> {
  const version = /<amqp-client\.version>([^<]+)<\/amqp-client\.version>/.exec(
    readFileSync(POM, 'utf8'),
  )?.[1];
  if (version === undefined) return Promise.reject(new Error(`${POM} names no amqp-client.version`));
  const dir = path.join(REPOSITORY_ROOT, '.services', 'java-clients', `amqp-client-${version}`);
  return mavenJars(POM, dir, `amqp-client-${version}.jar`);
}

/** Runs test/java/<file> with the Java client on its class path; resolves to its stdout. */
export async function runJava(file: string, args: readonly string[]): Promise<string> {
  return runJavaSource(await javaClientJars(), path.join(JAVA_DIR, file), args);
}
