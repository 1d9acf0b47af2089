import 'reflect-metadata';
import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { InboxRecord } from '@ferry/core';
import { InboxAdminService, InboxModule } from '@ferry/nestjs';
import { EXAMPLE_CONFIG, exampleConfig, type ExampleConfig } from './config';
import { PrismaModule, PrismaService } from './prisma.service';

/** The operator's commands, for one tenant; no worker runs in this context. */
@Injectable()
export class AdminCommands {
  private readonly tenant: string;

  constructor(
    @Inject(EXAMPLE_CONFIG) config: ExampleConfig,
    private readonly inboxAdmin: InboxAdminService,
    private readonly prisma: PrismaService,
  ) {
    this.tenant = config.tenant;
  }

  async listDead(): Promise<InboxRecord[]> {
    const page = await this.inboxAdmin.forTenant(this.tenant).list({ status: 'DEAD', limit: 500 });
    return [...page.records];
  }

  /** The "fix": the handler accepts refunds from now on. */
  async allowRefunds(): Promise<void> {
    await this.prisma.tenantSettings.upsert({
      where: { tenantId: this.tenant },
      create: { tenantId: this.tenant, refundsEnabled: true },
      update: { refundsEnabled: true },
    });
  }

  /** DEAD → PENDING, guarded by the version we looked at; a running worker picks it up. */
  async requeue(id: string): Promise<InboxRecord> {
    const scoped = this.inboxAdmin.forTenant(this.tenant);
    const record = await scoped.get(id);
    if (!record) throw new Error(`no inbox record ${id} for tenant ${this.tenant}`);
    return scoped.requeue({
      id,
      expectedVersion: record.rowVersion,
      actor: 'admin-cli',
      reason: 'refunds enabled for the tenant',
    });
  }
}

@Module({})
class AdminModule {
  static forRoot(config: ExampleConfig): DynamicModule {
    const prisma = PrismaModule.forRoot(config.databaseUrl);
    return {
      module: AdminModule,
      imports: [prisma, InboxModule.forRoot({ prisma: PrismaService, imports: [prisma] })],
      providers: [{ provide: EXAMPLE_CONFIG, useValue: config }, AdminCommands],
    };
  }
}

/** Runs `work` in a short-lived Nest context of its own, as the CLI below does. */
export async function withAdmin<T>(
  config: ExampleConfig,
  work: (admin: AdminCommands) => Promise<T>,
): Promise<T> {
  const app = await NestFactory.createApplicationContext(AdminModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  try {
    return await work(app.get(AdminCommands));
  } finally {
    await app.close(); // disconnects Prisma after the inbox module closed
  }
}

/** `list-dead` | `allow-refunds` | `requeue <id>...`; returns the lines the CLI prints. */
export async function runAdminCommand(args: readonly string[], config = exampleConfig()): Promise<string[]> {
  const [command, ...ids] = args;
  return withAdmin(config, async (admin) => {
    switch (command) {
      case 'list-dead':
        return (await admin.listDead()).map(
          (r) => `${r.id}  v${r.rowVersion}  ${JSON.stringify(r.payload)}  ${r.lastError ?? ''}`,
        );
      case 'allow-refunds':
        await admin.allowRefunds();
        return [`refunds enabled for ${config.tenant}`];
      case 'requeue': {
        const lines: string[] = [];
        for (const id of ids) lines.push(`${(await admin.requeue(id)).id} requeued`);
        return lines;
      }
      default:
        throw new Error('usage: admin.js list-dead | allow-refunds | requeue <id>...');
    }
  });
}

if (require.main === module) {
  process.env.FERRY_LOG_LEVEL ??= 'error';
  runAdminCommand(process.argv.slice(2)).then(
    (lines) => process.stdout.write(lines.map((line) => `${line}\n`).join('')),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
