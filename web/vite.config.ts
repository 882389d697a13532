import { defineConfig } from 'vitest/config'
import react from '@vitejs/plugin-react'

// The API runs on the Rust server; in development Vite proxies to it.
export default defineConfig({
  plugins: [react()],
  server: {
    port: 5173,
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
  build: {
    outDir: 'dist',
    chunkSizeWarningLimit: 2000,
    rolldownOptions: {
      output: {
        // The first route (`/` → /papercheck/check) in few files: many small chunks gzip worse and
        // cost a request each. Pages not named here keep Rolldown's automatic splitting.
        codeSplitting: {
          groups: [
            // React, React DOM and the router change only with an upgrade: their own file stays
            // cached across releases (costs ~0.5 kB gzip against one file).
            { name: 'react', test: /node_modules[\\/](react|react-dom|react-router|scheduler)[\\/]/, priority: 3 },
            // The rest of what index.html's entry loads statically (the shell and the antd it
            // renders): one file instead of ~40 modulepreloads.
            { name: 'shell', tags: ['$initial'], priority: 2 },
            // The check page and what it needs beyond the shell (form, input, upload, …); pages
            // with similar forms share this chunk.
            { name: 'check', test: /src[\\/]features[\\/]check[\\/]CheckPage\.tsx$/, priority: 1 },
          ],
        },
      },
    },
  },
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
  },
})
