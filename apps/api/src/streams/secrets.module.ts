import { Logger, Module } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { loadSecretsKey, SecretBox } from './secret-box';

/** The SecretBox of stream credentials, its key loaded (or generated into DATA_DIR) once at start. */
@Module({
  providers: [
    {
      provide: SecretBox,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        const logger = new Logger('Secrets');
        return new SecretBox(loadSecretsKey(config.secretsKey, config.dataDir, (message) => logger.warn(message)));
      },
    },
  ],
  exports: [SecretBox],
})
export class SecretsModule {}
