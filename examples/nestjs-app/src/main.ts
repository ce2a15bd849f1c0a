import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';

/** `AUDIT_TRAIL_URL=http://localhost:3000 AUDIT_TRAIL_KEY=<key> npm run example:nestjs` beside `npm start`. */
async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // SIGTERM closes the recorder: it sends what it holds for up to 10 s, the rest stays in the spool.
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3100));
  console.log(`example app on ${await app.getUrl()}: curl -X POST -H 'X-User: alice' $URL/invoices/42/approve`);
}

void main();
