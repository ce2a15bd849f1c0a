import { Logger, Provider } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { loadSecretsKey, SecretBox } from '../secret-box';

/** The one SecretBox of the app: SECRETS_KEY, or the key generated into DATA_DIR (a warning says where). */
export const SECRET_BOX_PROVIDER: Provider = {
  provide: SecretBox,
  inject: [AppConfig],
  useFactory: (config: AppConfig): SecretBox => {
    const logger = new Logger('SecretBox');
    return new SecretBox(loadSecretsKey(config.secretsKey, config.dataDir, (message) => logger.warn(message)));
  },
};
