#!/usr/bin/env node
// NestJS 12 smoke run of the BUILT @ferry/nestjs (packages/nestjs/dist), spawned by
// packages/nestjs/test/nest12.test.ts. NestJS 12 is ESM-only; ferry's CommonJS build loads it
// with require(), which Node >= 20.19 supports for ES modules without top-level await.
//
// Resolution: every `@nestjs/*` request made outside this folder's node_modules is resolved from
// this folder, so ferry's dist gets the NestJS 12 copy installed here (install.js) instead of the
// NestJS 11 copy at the repository root. Everything else (@ferry/core, pg, @prisma/*, typescript)
// resolves from the root as usual. The repository's TypeScript test support (a fresh migrated
// database, the generated Prisma client) is loaded through an in-memory transpile hook using the
// root's typescript.
//
// Prints one line `FERRY_NEST12_RESULT <json>` on success; exits 1 with the error on stderr otherwise.
'use strict';
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const root = path.resolve(here, '../../../..');
const ownModules = path.join(here, 'node_modules') + path.sep;
const anchor = path.join(here, 'smoke.js');
const loaded = {};

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  const from = parent && parent.filename;
  if (request.startsWith('@nestjs/') && from && !from.startsWith(ownModules)) {
    const resolved = resolveFilename.call(
      this,
      request,
      { id: anchor, filename: anchor, paths: Module._nodeModulePaths(here) },
      isMain,
    );
    (loaded[request] ??= new Set()).add(resolved);
    return resolved;
  }
  try {
    return resolveFilename.call(this, request, parent, isMain, options);
  } catch (error) {
    // The generated Prisma client imports its TypeScript siblings as `./x.js`.
    if (from && from.endsWith('.ts') && request.startsWith('.') && request.endsWith('.js')) {
      return resolveFilename.call(this, `${request.slice(0, -3)}.ts`, parent, isMain, options);
    }
    throw error;
  }
};

const ts = require('typescript');
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  });
  module._compile(outputText, filename);
};

require('reflect-metadata');
const { Injectable, Module: NestModule } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { interactiveTransaction } = require('@ferry/core');
const ferry = require(path.join(root, 'packages/nestjs/dist/index.js'));
const { createTestDatabase } = require(path.join(root, 'test-support/database.ts'));

function packageOf(file) {
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const { name, version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
      if (name) return { name, version, dir };
    }
  }
  throw new Error(`no package.json above ${file}`);
}

async function waitFor(check, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function gate() {
  let open;
  const promise = new Promise((resolve) => (open = resolve));
  return { promise, open };
}

/** Applies decorators the way TypeScript's emitted __decorate does. */
function decorateMethod(cls, method, decorator) {
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, method);
  Object.defineProperty(
    cls.prototype,
    method,
    Reflect.decorate([decorator], cls.prototype, method, descriptor),
  );
}

/** One application: prisma module imported by the ferry modules, or global. */
async function scenario(t, placement) {
  const log = [];
  const slowPublish = { started: gate(), held: gate() };
  const slowHandler = { started: gate(), held: gate() };

  class PrismaService {
    constructor(client) {
      this.client = client;
      return new Proxy(this, {
        get: (target, key, receiver) => {
          if (key in target) return Reflect.get(target, key, receiver);
          const value = Reflect.get(client, key, client);
          return typeof value === 'function' ? value.bind(client) : value;
        },
      });
    }
    async onModuleDestroy() {
      log.push('prisma:disconnect');
      await this.client.$disconnect();
    }
  }

  class PrismaModule {}
  NestModule({})(PrismaModule);
  const prismaModule = {
    module: PrismaModule,
    global: placement === 'global',
    providers: [{ provide: PrismaService, useFactory: () => new PrismaService(t.newClient()) }],
    exports: [PrismaService],
  };

  const delivered = [];
  const publisher = {
    async publish(messages) {
      if (messages.some((m) => m.type === 'order.slow')) {
        slowPublish.started.open();
        await slowPublish.held.promise;
        log.push('publish:finished');
      }
      delivered.push(...messages.map((m) => m.type));
      return messages.map((m) => ({ id: m.id, status: 'sent' }));
    },
  };

  class OrderHandlers {
    async project(_payload, context) {
      await context.tx.$executeRawUnsafe(
        'INSERT INTO effects (consumer, message_id) VALUES ($1, $2)',
        context.consumer,
        context.messageId,
      );
    }
    async slow(_payload, context) {
      slowHandler.started.open();
      await slowHandler.held.promise;
      await context.tx.$executeRawUnsafe(
        'INSERT INTO effects (consumer, message_id) VALUES ($1, $2)',
        context.consumer,
        context.messageId,
      );
      log.push('handler:finished');
    }
  }
  Injectable()(OrderHandlers);
  decorateMethod(OrderHandlers, 'project', ferry.InboxHandler('orders.projection'));
  decorateMethod(OrderHandlers, 'slow', ferry.InboxHandler('orders.slow'));

  const imports = placement === 'global' ? [] : [prismaModule];
  class AppModule {}
  NestModule({
    imports: [
      ferry.OutboxModule.forRoot({ prisma: PrismaService, imports, publisher, pollInterval: 20 }),
      ferry.InboxModule.forRoot({
        prisma: PrismaService,
        imports,
        worker: { enabled: true, pollIntervalMs: 20 },
      }),
      ...(placement === 'global' ? [prismaModule] : []),
    ],
    providers: [OrderHandlers],
  })(AppModule);

  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  let closed = false;
  try {
    const prisma = app.get(PrismaService);
    const emitter = app.get(ferry.OutboxEmitter);
    const inbox = app.get(ferry.InboxService);
    const relay = app.get(ferry.OutboxRelayService).relay;
    const tenant = `tenant-${placement}`;

    const outboxStatus = async (id) =>
      (await t.db.query('SELECT status FROM outbox_events WHERE id = $1', [id]))[0]?.status;
    const inboxStatus = async (id) =>
      (await app.get(ferry.InboxAdminService).forTenant(tenant).get(id))?.status;

    const { id: eventId } = await interactiveTransaction(prisma, (tx) =>
      emitter.emit(tx, { type: 'order.created', payload: { placement }, tenantId: tenant }),
    );
    await waitFor(async () => (await outboxStatus(eventId)) === 'SENT', 'the event to be SENT');

    const accepted = await inbox.accept({
      consumer: 'orders.projection',
      messageId: `m-${placement}`,
      tenantId: tenant,
      payload: {},
    });
    await waitFor(
      async () => (await inboxStatus(accepted.record.id)) === 'COMPLETED',
      'the inbox message to complete',
    );
    const effects = await t.db.query('SELECT consumer FROM effects WHERE message_id = $1', [
      `m-${placement}`,
    ]);

    // Drain: a publish and a handler are held open across app.close().
    const { id: slowEventId } = await interactiveTransaction(prisma, (tx) =>
      emitter.emit(tx, { type: 'order.slow', payload: {}, tenantId: tenant }),
    );
    const slowReceipt = await inbox.accept({
      consumer: 'orders.slow',
      messageId: `slow-${placement}`,
      tenantId: tenant,
      payload: {},
    });
    await Promise.all([slowPublish.started.promise, slowHandler.started.promise]);
    const closing = app.close();
    // Nest awaits one module's destroy hooks before the next module's, so one of them drains first.
    await waitFor(() => inbox.state === 'closing' || relay.state === 'closing', 'ferry to start draining');
    const logWhileDraining = [...log];
    slowHandler.held.open();
    slowPublish.held.open();
    await closing;
    closed = true;

    return {
      placement,
      outbox: { status: await outboxStatus(eventId), slowStatus: await outboxStatus(slowEventId), delivered },
      inbox: {
        status: (
          await t.db.query('SELECT status FROM ferry_inbox_receipts WHERE id = $1', [accepted.record.id])
        )[0]?.status,
        slowStatus: (
          await t.db.query('SELECT status FROM ferry_inbox_receipts WHERE id = $1', [slowReceipt.record.id])
        )[0]?.status,
        effects: effects.map((e) => e.consumer),
      },
      drain: { logWhileDraining, log, relayState: relay.state, inboxState: inbox.state },
    };
  } finally {
    if (!closed) {
      slowHandler.held.open();
      slowPublish.held.open();
      await app.close().catch(() => undefined);
    }
  }
}

async function main() {
  const t = await createTestDatabase();
  try {
    await t.db.execute('CREATE TABLE effects (consumer text NOT NULL, message_id text NOT NULL)');
    const scenarios = [];
    for (const placement of ['imported', 'global']) scenarios.push(await scenario(t, placement));
    const nest = {};
    for (const [request, files] of Object.entries(loaded)) {
      nest[request] = [...files].map((file) => {
        const { name, version, dir } = packageOf(file);
        return { name, version, dir: path.relative(root, dir) };
      });
    }
    const rootNest = path.join(root, 'node_modules/@nestjs') + path.sep;
    const result = {
      node: process.version,
      requireModule: process.features.require_module === true,
      nest,
      // NestJS 11 is CommonJS: had any of it been loaded, it would be in require.cache.
      nest11Loaded: Object.keys(require.cache).filter((file) => file.startsWith(rootNest)),
      scenarios,
    };
    process.stdout.write(`FERRY_NEST12_RESULT ${JSON.stringify(result)}\n`);
  } finally {
    await t.drop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error && error.stack ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
