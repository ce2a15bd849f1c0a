import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './api';
import { AccountsPage } from './pages/accounts';
import { ChainsPage } from './pages/chains';
import { EventPage } from './pages/event';
import { EventsPage } from './pages/events';
import { KeysPage } from './pages/keys';
import { LivePage } from './pages/live';
import { SignInPage } from './pages/sign-in';
import { StatsPage } from './pages/stats';
import { SchemasPage } from './pages/schemas';
import { StreamsPage } from './pages/streams';
import { BASE, Link, navigate, useLocation } from './router';
import { session } from './session';
import { isOperator, mayManage, type Me } from './types';
import { Busy, ErrorText, ZoneSwitch } from './ui';
import { AccountPicker } from './account-picker';
import { ErasuresPage } from './pages/erasures';
import './styles.css';

/** Who the key is (GET /v1/me, docs/contract.md §12); null when the service has no /v1/me (scopes unknown). */
type Identity = { me: Me | null };

async function identify(): Promise<Identity> {
  try {
    return { me: (await api.get<{ data: Me }>('/v1/me')).data };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    // No /v1/me on this service: check the key with a read, and offer the read pages.
    await api.get('/v1/chains', { limit: 1 });
    return { me: null };
  }
}

function App() {
  const { path } = useLocation();
  const [key, setKey] = useState(session.key());
  const [identity, setIdentity] = useState<Identity | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    if (key === null) return;
    setError(null);
    identify().then(setIdentity, (e: unknown) => {
      if (e instanceof ApiError && e.status === 401) {
        // Back on the sign-in page, where there is no Sign out: say what to do there.
        setError(
          new ApiError(401, e.code, 'That key was refused (unknown, revoked or expired). Check it and paste it again.'),
        );
        session.signOut();
        setKey(null);
      } else setError(e);
    });
  }, [key]);

  const signIn = (pasted: string) => {
    session.signIn(pasted);
    setIdentity(null);
    setKey(pasted);
    if (path === '/' || path === '/sign-in') navigate(`${BASE}/events`, true);
  };
  const signOut = () => {
    session.signOut();
    setKey(null);
    setIdentity(null);
    navigate(`${BASE}/`, true);
  };

  if (key === null) return <SignInPage onSignIn={signIn} error={error} />;
  if (identity === null)
    return (
      <main id="main">
        {error ? <ErrorText error={error} /> : <Busy label="Checking the key" />}
        {error !== null && (
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        )}
      </main>
    );

  const scopes = identity.me?.scopes;
  const links: [string, string, boolean][] = [
    ['/events', 'Events', true],
    ['/chains', 'Chains', true],
    ['/statistics', 'Statistics', true],
    ['/live', 'Live', true],
    ['/keys', 'Keys', mayManage(identity.me)],
    ['/streams', 'Streams', mayManage(identity.me)],
    ['/schemas', 'Schemas', mayManage(identity.me)],
    ['/erasures', 'Erasures', mayManage(identity.me)],
    ['/accounts', 'Accounts', !!scopes && scopes.includes('operator')],
  ];
  // The account an operator reads (account.ts) stays with every page of the navigation.
  const account = new URLSearchParams(location.search).get('account');
  const keep = account ? `?account=${encodeURIComponent(account)}` : '';
  const section = '/' + (path.split('/')[1] ?? '');
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">Audit trail</span>
        <nav aria-label="Main">
          <ul>
            {links
              .filter(([, , shown]) => shown)
              .map(([to, label]) => (
                <li key={to}>
                  <Link to={BASE + to + (to === '/accounts' ? '' : keep)} current={section === to}>
                    {label}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
        <div class="tools">
          <span class="who">{identity.me ? `${identity.me.accountName} · ${identity.me.scopes.join(', ')}` : ''}</span>
          {identity.me && isOperator(identity.me) && <AccountPicker me={identity.me} />}
          <ZoneSwitch />
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Route path={path} me={identity.me} />
      </main>
    </>
  );
}

function Route({ path, me }: { path: string; me: Me | null }) {
  const [, section = '', id] = path.split('/');
  switch (section) {
    case '':
    case 'sign-in':
    case 'events':
      return id ? <EventPage id={decodeURIComponent(id)} me={me} /> : <EventsPage />;
    case 'chains':
      return <ChainsPage me={me} />;
    case 'statistics':
      return <StatsPage />;
    case 'live':
      return <LivePage />;
    case 'keys':
      return <KeysPage me={me} />;
    case 'streams':
      return <StreamsPage me={me} />;
    case 'schemas':
      return <SchemasPage me={me} />;
    case 'erasures':
      return <ErasuresPage me={me} />;
    case 'accounts':
      return <AccountsPage me={me} />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            There is no page at this address. <Link to={`${BASE}/events`}>Go to Events</Link>.
          </p>
        </>
      );
  }
}

render(<App />, document.getElementById('app')!);
