import assert from 'node:assert/strict'
import { before, after } from 'node:test'
import { launch } from './lib.mjs'
// Starts the real `wenjian serve` binary on a free port with a fresh SQLite database.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const BIN = process.env.WENJIAN_BIN || resolve(import.meta.dirname, '../target/debug/wenjian')

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer()
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => ok(port))
    })
    srv.on('error', fail)
  })
}

export async function startServer(extraEnv = {}) {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'wenjian-e2e-'))
  const base = `http://127.0.0.1:${port}`
  const child = spawn(BIN, ['serve'], {
    cwd: dataDir,
    env: { ...process.env, WENJIAN_LISTEN: `127.0.0.1:${port}`, WENJIAN_DATA_DIR: dataDir, WENJIAN_LOG: 'warn', ...extraEnv },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      const res = await fetch(`${base}/api/health`)
      if (res.ok) break
    } catch {
      // not up yet
    }
    if (child.exitCode !== null) throw new Error(`wenjian exited with ${child.exitCode}`)
    if (Date.now() > deadline) throw new Error('wenjian did not start within 30 s')
    await new Promise((r) => setTimeout(r, 200))
  }
  return {
    base,
    dataDir,
    /** Runs a `wenjian` subcommand against this server's data (as an operator would). */
    cli(args) {
      return execFileSync(BIN, args, { cwd: dataDir, env: { ...process.env, WENJIAN_DATA_DIR: dataDir, WENJIAN_LOG: 'warn' } }).toString()
    },
    async stop() {
      child.kill('SIGTERM')
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)))
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Registers through the API and returns the access token. */
export async function registerViaApi(base, username, password) {
  const res = await fetch(`${base}/api/base/login_api/f/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })
  const body = await res.json()
  if (!res.ok) throw new Error(body.message)
  return body.result.access_token
}

/**
 * Registers node:test hooks that start a fresh server and browser for a test file and stop them
 * afterwards; the returned object holds `server` and `browser` once the hooks ran. `extraEnv` is
 * added to the server's environment.
 */
export function useServerAndBrowser(setup, extraEnv = {}) {
  const env = { cspViolations: [] }
  before(async () => {
    env.server = await startServer(extraEnv)
    env.browser = watchContentSecurityPolicy(await launch(), env.cspViolations)
    await setup?.(env)
  })
  after(async () => {
    await env.browser?.close()
    await env.server?.stop()
    // The server's Content-Security-Policy must not block anything the app itself does.
    assert.deepEqual(env.cspViolations, [], 'the page broke its own Content-Security-Policy')
  })
  return env
}

/** Records every Content-Security-Policy violation reported in any page of `browser`. */
function watchContentSecurityPolicy(browser, violations) {
  const watch = (page) =>
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) violations.push(message.text())
    })
  const newContext = browser.newContext.bind(browser)
  browser.newContext = async (...args) => {
    const context = await newContext(...args)
    context.on('page', watch)
    return context
  }
  const newPage = browser.newPage.bind(browser)
  browser.newPage = async (...args) => {
    const page = await newPage(...args)
    watch(page)
    return page
  }
  return browser
}
