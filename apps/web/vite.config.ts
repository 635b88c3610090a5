import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The web app (D17). `npm run build -w @paddock/web` writes `dist/`, which the server serves at `/`;
 * `npm run dev -w @paddock/web` serves it with hot reload, the API proxied to a running server
 * (`PADDOCK_URL`, default http://127.0.0.1:8787).
 */
const service = process.env.PADDOCK_URL ?? 'http://127.0.0.1:8787';

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: { proxy: { '/v2': { target: service, changeOrigin: true } } },
});
