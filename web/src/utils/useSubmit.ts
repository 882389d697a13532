import { useRef, useState } from 'react'
import { toastError } from './feedback'

/**
 * Wraps a form submit: a submit while one is running is ignored, a failure shows its message as
 * a toast (and only ends loading), success runs the action's own follow-up.
 */
export function useSubmit<T>(action: (values: T) => Promise<void>): [boolean, (values: T) => Promise<void>] {
  const [loading, setLoading] = useState(false)
  const running = useRef(false)
  const submit = async (values: T) => {
    if (running.current) return
    running.current = true
    setLoading(true)
    try {
      await action(values)
    } catch (e) {
      toastError((e as Error).message)
    } finally {
      running.current = false
      setLoading(false)
    }
  }
  return [loading, submit]
}
