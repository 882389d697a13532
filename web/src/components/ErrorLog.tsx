import { lazy, Suspense } from 'react'
import { useErrorLogStore } from '../stores/errorLog'

const ErrorLogButton = lazy(() => import('./ErrorLogButton'))

/** The bug icon appears once something has gone wrong (its code loads then); its dialog lists what happened. */
export default function ErrorLog() {
  const count = useErrorLogStore((s) => s.logs.length)
  if (count === 0) return null
  return (
    <Suspense fallback={null}>
      <ErrorLogButton />
    </Suspense>
  )
}
