import { Collapse } from 'antd'
import type { ReactNode } from 'react'

/** 技术说明: engine names, prompt and calibration versions, folded away from the figures a student
 * reads, one click from whoever needs to trace a result. */
export default function TechNote({ children, testId }: { children: ReactNode; testId?: string }) {
  return (
    <Collapse
      ghost
      size="small"
      className="tech-note"
      data-testid={testId}
      items={[{ key: 'tech', label: <span className="muted">技术说明</span>, children }]}
    />
  )
}
