import { diffArrays } from 'diff'
import { words } from '../features/rewrite/figures'

/** What a rewrite removed and added, marked word by word: the `before` side strikes what went,
 * the `after` side marks what came, `both` shows the two in one text. */
export default function TextDiff({ before, after, side }: { before: string; after: string; side: 'before' | 'after' | 'both' }) {
  const parts = diffArrays(words(before), words(after))
  return (
    <>
      {parts.map((p, i) => {
        const text = p.value.join('')
        if (p.added) return side !== 'before' ? <ins key={i} className="diff-added">{text}</ins> : null
        if (p.removed) return side !== 'after' ? <del key={i} className="diff-removed">{text}</del> : null
        return <span key={i}>{text}</span>
      })}
    </>
  )
}
