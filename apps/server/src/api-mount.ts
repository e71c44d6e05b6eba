import { errorBody } from '@gatehouse/api-contract';
import express from 'express';
import { createApi, type ApiOptions } from './api.js';

/** The product API as app.ts mounts it under /api: no answer cached, JSON bodies, a JSON 404. */
export function apiRouter(options: ApiOptions): express.Router {
  const api = express.Router();
  // Every answer, 401/403/404 and errors included: none may be kept by a browser or a shared cache.
  api.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  api.use(express.json({ limit: '100kb' }));
  api.use(createApi(options));
  api.use((_req, res) => {
    res.status(404).json(errorBody('not_found', 'There is no API endpoint at this path.'));
  });
  return api;
}
