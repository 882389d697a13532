import { Button, Tooltip } from 'antd'
import { useNavigate } from 'react-router'
import type { RewriteRecord } from './types'
import { useSubmit } from '../../utils/useSubmit'

/** A report's way into rewriting: makes a draft of the paragraphs the report flagged, then opens its submit page. */
export default function RewriteFromReport({ what, disabledReason, start, to }: { what: string; disabledReason: string | null; start: () => Promise<RewriteRecord>; to: string }) {
  const navigate = useNavigate()
  const [busy, go] = useSubmit(async () => {
    const draft = await start()
    navigate(`${to}?draft=${draft.id}`)
  })
  return (
    <Tooltip title={disabledReason ?? '改写报告标出的段落，并逐段复测'}>
      <Button loading={busy} disabled={Boolean(disabledReason)} onClick={() => void go(undefined)} data-testid="rewrite-from-report">
        {what}
      </Button>
    </Tooltip>
  )
}
