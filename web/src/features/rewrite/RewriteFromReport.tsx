import { Button, Tooltip } from 'antd'
import { useNavigate } from 'react-router'
import type { RewriteRecord } from './types'
import { useRewriteEngine } from './EngineNotice'
import { useSubmit } from '../../utils/useSubmit'

/** A report's way into rewriting: makes a draft of the paragraphs the report flagged, then opens its submit page. */
export default function RewriteFromReport({ what, disabledReason, start, to }: { what: string; disabledReason: string | null; start: () => Promise<RewriteRecord>; to: string }) {
  const navigate = useNavigate()
  // Without a model nothing can rewrite: say why instead of offering a draft that cannot be paid for.
  const engine = useRewriteEngine().data
  const reason = disabledReason ?? (engine?.source === 'none' ? (engine.unavailable ?? '本站暂时无法改写') : null)
  const [busy, go] = useSubmit(async () => {
    const draft = await start()
    navigate(`${to}?draft=${draft.id}`)
  })
  return (
    <Tooltip title={reason ?? '改写报告标出的段落，并逐段复测'}>
      <Button loading={busy} disabled={Boolean(reason)} onClick={() => void go(undefined)} data-testid="rewrite-from-report">
        {what}
      </Button>
    </Tooltip>
  )
}
