import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The service that `npm run dev -w console` proxies to (a running `npm start`). */
const api = process.env.API_URL ?? 'http://localhost:3000';

export default defineConfig({
  plugins: [react()],
  // Hashed files only under /assets/: the service serves them with a year-long immutable cache.
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      output: {
        // The framework in one chunk: split across the lazy screens, react-admin's modules (which import each other in
        // circles) would load out of order. What only one screen needs (Markdown, QR codes, the reports' charts with
        // their d3 scales) stays with that screen.
        manualChunks: (id) => (/node_modules\/(?!marked|dompurify|qrcode|@mui\/x-|d3-|internmap|flatqueue|bezier-easing)/.test(id) ? 'framework' : undefined),
      },
    },
  },
  server: {
    port: 5173,
    proxy: { '/api': { target: api, changeOrigin: false }, '/uploads': { target: api, changeOrigin: false } },
  },
});
