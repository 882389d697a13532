import type { ReactNode } from 'react'
import { Result } from 'antd'
import { useUserStore } from '../../stores/user'

/**
 * The console's pages render only for operators. The server refuses every console call to
 * anyone else anyway; this only spares a student a page of errors if they type the address.
 */
export default function OperatorGate({ children }: { children: ReactNode }) {
  const operator = useUserStore((s) => s.operator)
  if (!operator) {
    return (
      <div className="page-card">
        <Result status="403" title="无权访问" subTitle="运营后台仅限运营人员使用；如需开通，请联系站点管理员。" />
      </div>
    )
  }
  return <>{children}</>
}
