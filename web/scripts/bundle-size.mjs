// Measures the JavaScript the first route needs: the entry script of dist/index.html and the
// modules it preloads, gzipped with zlib. `node scripts/bundle-size.mjs` prints the sizes and
// exits non-zero over the budget; the e2e suite (e2e/tests/bundle.test.mjs) also measures what a
// browser really downloads on the first route.
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'

// Decimal kilobytes, as Vite reports them.
export const BUDGET_BYTES = 350 * 1000
export const DIST = resolve(import.meta.dirname, '../dist')

export const gzipSize = (buffer) => gzipSync(buffer, { level: 9 }).length

/** The entry script and modulepreload links of index.html, with their gzip sizes. */
export function staticEntrySize(dist = DIST) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8')
  const srcs = new Set()
  for (const tag of html.match(/<(script|link)\b[^>]*>/g) ?? []) {
    const isEntry = tag.startsWith('<script') && /type="module"/.test(tag)
    const isPreload = tag.startsWith('<link') && /rel="modulepreload"/.test(tag)
    const url = tag.match(/(?:src|href)="([^"]+)"/)?.[1]
    if ((isEntry || isPreload) && url) srcs.add(url)
  }
  const files = [...srcs].map((url) => {
    const file = url.replace(/^\//, '')
    return { file, gzip: gzipSize(readFileSync(join(dist, file))) }
  })
  return { total: files.reduce((sum, f) => sum + f.gzip, 0), files }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { total, files } = staticEntrySize(process.argv[2] ? resolve(process.argv[2]) : DIST)
  for (const f of files) console.log(`${f.file}\t${(f.gzip / 1000).toFixed(1)} kB gzip`)
  console.log(`total\t${(total / 1000).toFixed(1)} kB gzip (budget ${BUDGET_BYTES / 1000} kB)`)
  if (total > BUDGET_BYTES) {
    console.error('over the first-route JavaScript budget')
    process.exit(1)
  }
}
