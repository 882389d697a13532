import { useState, type ReactNode } from 'react'
import { Alert, Button, Descriptions, Modal, Spin } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { useNavigate } from 'react-router'
import { rewriteOrder, rewriteReload, rewriteSubmit, rewriteSubmission } from './api'
import type { Goal, Strength } from './types'
import { formatFen } from '../../utils/format'
import { PackageNotice, confirmedPayment, payAsShown, paysWithText } from '../order/paysWith'
import ScanToPay from '../order/ScanToPay'
import { useSubmit } from '../../utils/useSubmit'

export interface RewriteChoice {
  goal: Goal
  strength: Strength
  frozen: string
}

/** Confirms the price of a rewrite (or of running an ended one again) and pays from the balance. */
/** `submit` pays for a draft made elsewhere (paragraph and smart rewriting) instead of the paper call; `line` runs one paragraph again. */
export default function RewritePayModal({ id, choice, rerun = false, line, submit, onClose, onPaid }: { id: number | null; choice?: RewriteChoice; rerun?: boolean; line?: number; submit?: (id: number, headers: Record<string, string>) => Promise<unknown>; onClose: () => void; onPaid: () => void }) {
  const navigate = useNavigate()
  const order = useQuery({ queryKey: ['rewrite-order', id, line], queryFn: () => rewriteOrder(id ?? 0, line), enabled: id !== null, staleTime: 0 })
  const [paying, pay] = useSubmit(async () => {
    const shown = order.data?.cost
    if (id === null || !shown) return
    const headers = confirmedPayment(shown)
    await payAsShown(async () => {
      if (submit && !rerun) await submit(id, headers)
      else if (rerun || !choice) await rewriteReload(id, line, headers)
      else await rewriteSubmit(id, choice.goal, choice.strength, choice.frozen, headers)
    }, () => order.refetch())
    onPaid()
  })
  const c = order.data?.cost
  return (
    <Modal
      open={id !== null}
      title={line !== undefined ? `重新改写第 ${line + 1} 段` : rerun ? '重新改写' : '确认支付'}
      onCancel={onClose}
      destroyOnHidden
      footer={[
        <Button key="cancel" onClick={onClose}>取消</Button>,
        <Button key="pay" type="primary" loading={paying} disabled={!c || c.paysWith === 'insufficient'} onClick={() => void pay(undefined)} data-testid="rewrite-pay">
          {rerun ? '支付并重新改写' : '确认支付并改写'}
        </Button>,
      ]}
    >
      {order.isLoading || !c ? (
        order.error ? <Alert type="error" showIcon title={order.error.message} /> : <Spin />
      ) : (
        <>
          <Descriptions column={1} bordered size="small">
            <Descriptions.Item label="改写字数">{c.chars.toLocaleString('zh-CN')} 字</Descriptions.Item>
            <Descriptions.Item label="价格">
              <span data-testid="rewrite-price">{formatFen(c.priceFen)}</span>（每千字 {formatFen(c.pricePerThousandFen)}，不足千字按千字计）
            </Descriptions.Item>
            <Descriptions.Item label="支付方式">
              <span data-testid="pays-with">{paysWithText(c)}</span>
            </Descriptions.Item>
            <Descriptions.Item label="账户余额">{formatFen(c.balanceFen)}</Descriptions.Item>
          </Descriptions>
          <div className="muted">{c.rule}</div>
          <PackageNotice cost={c} />
          {c.paysWith === 'insufficient' && (
            <Alert className="mt" type="warning" showIcon title="余额不足，无法提交" action={<Button size="small" onClick={() => navigate('/order/recharge')}>去充值</Button>} />
          )}
          {c.paysWith === 'insufficient' && id !== null && (
            <ScanToPay
              taskId={id}
              shortFen={c.priceFen - c.balanceFen}
              onPaid={() => void pay(undefined)}
              submit={!submit && !rerun && choice ? rewriteSubmission(id, choice.goal, choice.strength, choice.frozen) : undefined}
              priceFen={c.priceFen}
            />
          )}
        </>
      )}
    </Modal>
  )
}

/** 重新改写此段 for the rewrite `id`: a function that opens the price of running one paragraph again, and the modal to render. */
export function useLineRerun(id: number | null, onPaid: () => void): [(index: number) => void, ReactNode] {
  const [line, setLine] = useState<number | undefined>()
  const modal = (
    <RewritePayModal
      id={line === undefined ? null : id}
      rerun
      line={line}
      onClose={() => setLine(undefined)}
      onPaid={() => {
        setLine(undefined)
        onPaid()
      }}
    />
  )
  return [setLine, modal]
}
