import { Alert } from 'antd'
import { ApiError } from '../../api/client'
import { formatDateTime, formatFen } from '../../utils/format'

/** The user's packages of the kind that may pay for a task, as every price answer carries them. */
export interface PackagePayment {
  kind: string
  /** What this task takes: uses, or characters for rewriting. */
  units: number
  unit: string
  remaining: number
  covers: boolean
  names: string[]
  expiresAt: number
  note?: string | null
}

export type PaysWith = 'free_check' | 'package' | 'balance' | 'insufficient'

interface Priced {
  paysWith: PaysWith
  priceFen: number
  freeChecks?: number
  package?: PackagePayment | null
}

/**
 * The header that makes a paid submission conditional on what the dialog showed: the server
 * charges nothing and answers 412 `payment_changed` when something else would pay now. After a
 * scan-to-pay top-up the balance pays.
 */
export function confirmedPayment(c: { paysWith: PaysWith; priceFen?: number }): Record<string, string> {
  const headers: Record<string, string> = { 'X-Confirmed-Payment': c.paysWith === 'insufficient' ? 'balance' : c.paysWith }
  // The price shown: operators may change prices at any moment, and the server charges none
  // that the dialog did not show (412 payment_changed, nothing charged).
  if (typeof c.priceFen === 'number') headers['X-Confirmed-Price'] = String(c.priceFen)
  return headers
}

/** Runs a paid submission; when the payment changed since the dialog was shown, the dialog
 * fetches the new quote (the server's message says what changed) before the error goes on. */
export async function payAsShown<T>(submit: () => Promise<T>, refresh: () => unknown): Promise<T> {
  try {
    return await submit()
  } catch (e) {
    if (e instanceof ApiError && e.code === 'payment_changed') void refresh()
    throw e
  }
}

const count = (n: number) => n.toLocaleString('zh-CN')

/** "what pays", in one line, for a price dialog's 支付方式 row. */
export function paysWithText(c: Priced): string {
  const p = c.package
  switch (c.paysWith) {
    case 'free_check':
      return `免费查重次数 1 次（剩余 ${c.freeChecks ?? 0} 次）`
    case 'package':
      return p ? `套餐抵扣 ${count(p.units)} ${p.unit}（${p.names.join('、')}，剩余 ${count(p.remaining)} ${p.unit}），不扣余额` : '套餐抵扣'
    case 'balance':
      return `账户余额 ${formatFen(c.priceFen)}`
    default:
      return '余额不足'
  }
}

/** Why a held package does not pay this time, when it does not (too little left, too long a paper). */
export function PackageNotice({ cost }: { cost: Priced }) {
  const p = cost.package
  if (!p) return null
  if (cost.paysWith === 'package') {
    return <div className="muted" data-testid="package-expiry">套餐在 {formatDateTime(p.expiresAt)} 到期，先到期的先用；任务失败时额度退回套餐。</div>
  }
  if (cost.paysWith === 'free_check') return null
  const why = p.note ?? (p.covers ? null : `套餐剩余 ${count(p.remaining)} ${p.unit}，不足本次所需 ${count(p.units)} ${p.unit}，本次${cost.paysWith === 'insufficient' ? '需' : '将'}从账户余额支付`)
  if (!why) return null
  return <Alert className="mt" type="info" showIcon title={why} data-testid="package-notice" />
}

/** What a task cost: the package units it used, or the money. */
export function formatCharge(chargedFen: number, chargedUnits: number | undefined, unit: string): string {
  return chargedUnits ? `套餐 ${count(chargedUnits)} ${unit}` : formatFen(chargedFen)
}
