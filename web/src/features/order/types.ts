export interface Package {
  id: number
  name: string
  description: string
  priceFen: number
  grantKind: string
  grantAmount: number
  grantLabel: string
  validDays: number
}

export interface TopUpTier {
  fen: number
  bonusFen: number
}

export interface PaymentOptions {
  channels: Channel[]
  unavailable?: string | null
  sandbox: boolean
  topUpTiers: TopUpTier[]
  topUpMinFen: number
  topUpMaxFen: number
  orderTtlMinutes: number
}

export type Channel = 'wechat' | 'alipay'

export interface Order {
  id: number
  outTradeNo: string
  kind: 'package' | 'top_up' | 'task'
  title: string
  channel: Channel
  amountFen: number
  creditFen: number
  grantLabel?: string | null
  grantDays: number
  /** The task a `task` order pays for. */
  taskId?: number | null
  status: 'pending' | 'paid' | 'closed' | 'refunded'
  payUrl?: string | null
  /** Refunded, counting refunds the provider has not confirmed yet. */
  refundedFen: number
  /** Of `refundedFen`, what the provider is still processing (退款处理中). */
  refundPendingFen: number
  createdAt: number
  expiresAt: number
  paidAt?: number | null
  sandbox: boolean
}

export interface OrderPage {
  list: Order[]
  page: number
  size: number
}

/** The submission a task's page makes once its scan-to-pay order is paid; the server makes it when the page is gone. */
export interface Submission {
  /** The endpoint, from the site's root (`/api/base/check_api/check_submit`). */
  path: string
  body: Record<string, unknown>
}

/** What is bought: a package, or an amount for the balance. */
export type OrderRequest =
  | { kind: 'package'; productId: number }
  | { kind: 'top_up'; amountFen: number }
  | { kind: 'task'; taskId: number; amountFen: number; submitAfterPaid?: Submission & { priceFen: number } }

/** `phone`: paid in this phone's browser (WeChat Pay H5 / Alipay wap.pay), which comes back to `returnUrl`. */
export type NewOrder = OrderRequest & { channel: Channel; scene?: 'qr' | 'phone'; returnUrl?: string }

export const channelLabels: Record<Channel, string> = { wechat: '微信支付', alipay: '支付宝' }

export const statusLabels: Record<Order['status'], string> = {
  pending: '待支付',
  paid: '已支付',
  closed: '已关闭',
  refunded: '已退款',
}
