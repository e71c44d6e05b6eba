// The baseline for first paint: the smallest React 19 page Vite builds, with the same plugin and target.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <h1>Hello, world</h1>
  </StrictMode>,
);
