import { useState } from 'preact/hooks';
import { ErrorText } from '../ui';

export function SignInPage({ onSignIn, error }: { onSignIn: (key: string) => void; error: unknown }) {
  const [key, setKey] = useState('');
  return (
    <main id="main" class="sign-in">
      <h1>Audit trail console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim() !== '') onSignIn(key.trim());
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          required
        />
        <button type="submit">Sign in</button>
        <p class="hint">The key is kept in this tab only (session storage) and sent only to this service.</p>
      </form>
      <ErrorText error={error} />
    </main>
  );
}
