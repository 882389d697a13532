import { useSyncExternalStore } from 'react'

/** Phone-sized screens: below 768 px wide. */
export const PHONE_QUERY = '(max-width: 767.98px)'

/** Whether a CSS media query matches now; follows changes (rotation, resizing). */
export function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const list = window.matchMedia(query)
      list.addEventListener('change', onChange)
      return () => list.removeEventListener('change', onChange)
    },
    () => window.matchMedia(query).matches,
    () => false,
  )
}

export const useIsPhone = () => useMediaQuery(PHONE_QUERY)
