import { renderToString } from 'react-dom/server';
import { App } from './app';

export function firstRender(): string {
  return renderToString(<App ssrPath="/" />);
}
