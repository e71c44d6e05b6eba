import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { loadSessionEarlyOnCallback } from './auth/auth-context';
import { telemetry } from './telemetry/telemetry';
import './app/styles.css';

loadSessionEarlyOnCallback();
telemetry.start(() =>
  import('./config/runtime-config').then(({ readRuntimeConfig }) => readRuntimeConfig().telemetry),
);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element.');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
