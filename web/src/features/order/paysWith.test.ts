import { describe, expect, it, vi } from 'vitest'
import { ApiError } from '../../api/client'
import { confirmedPayment, payAsShown } from './paysWith'

describe('paying as the dialog showed', () => {
  it('confirms what the dialog said, and the balance after a scan-to-pay top-up', () => {
    expect(confirmedPayment({ paysWith: 'package' })).toEqual({ 'X-Confirmed-Payment': 'package' })
    expect(confirmedPayment({ paysWith: 'free_check' })).toEqual({ 'X-Confirmed-Payment': 'free_check' })
    expect(confirmedPayment({ paysWith: 'insufficient' })).toEqual({ 'X-Confirmed-Payment': 'balance' })
    expect(confirmedPayment({ paysWith: 'balance', priceFen: 300 })).toEqual({ 'X-Confirmed-Payment': 'balance', 'X-Confirmed-Price': '300' })
  })

  it('fetches the new quote when the payment changed, and only then', async () => {
    const refresh = vi.fn()
    const changed = new ApiError(412, 'payment_changed', '支付方式已变化')
    await expect(payAsShown(() => Promise.reject(changed), refresh)).rejects.toBe(changed)
    expect(refresh).toHaveBeenCalledTimes(1)
    const short = new ApiError(402, 'insufficient_balance', '余额不足')
    await expect(payAsShown(() => Promise.reject(short), refresh)).rejects.toBe(short)
    expect(refresh).toHaveBeenCalledTimes(1)
    await expect(payAsShown(() => Promise.resolve(7), refresh)).resolves.toBe(7)
  })
})
