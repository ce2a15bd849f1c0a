import { Global, Module } from '@nestjs/common';
import { AppConfig, loadAppConfig } from './app-config';

/**
 * Validates the environment once, when the app is created, and provides it as the typed
 * AppConfig. (A plain factory rather than @nestjs/config: nothing here needs .env files, and
 * tests replace the whole object with overrideProvider(AppConfig).)
 */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => loadAppConfig(process.env) }],
  exports: [AppConfig],
})
export class AppConfigModule {}
